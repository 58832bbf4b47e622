#!/bin/sh
# A window of lines of a text file, with the whole file's size, SHA-256
# and line count, and its first 8 KiB (for the caller's binary check).
#   $1  the workspace root as this shell sees it
#   $2  the file, relative to $1
#   $3  the first line of the window (1-based)
#   $4  its last line
#   $5  the longest line kept, in bytes (longer lines are cut)
# Prints "OK <size> <sha256 hex> <lines> <sample bytes>\n", the sample,
# then the window's lines. Exits 21 for a directory, 3 when the path is not
# a regular file, and fail()s naming any other step that fails.
set -u
W=$1
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
F="$W/$2"
confine "$F"
[ -d "$F" ] && exit 21
[ -f "$F" ] || exit 3
capture
use_tmp read
S=$(stat -L -c %s -- "$F") || fail "stat"
SUM=$(sha256 <"$F") || fail "sha256"
L=$(LC_ALL=C sed -n '$=' <"$F") || fail "counting the lines"
head -c 8192 <"$F" >"$T/s" || fail "reading the first 8 KiB"
N=$(wc -c <"$T/s") || fail "wc"
{ LC_ALL=C sed -n "$3,$4p;$4q" <"$F" || echo "sed (status $?)" >"$T/failed"; } |
    LC_ALL=C cut -b "1-$5" >"$T/w" || fail "cut"
[ -s "$T/failed" ] && fail "$(first_line "$T/failed")"
printf 'OK %s %s %s %s\n' "$S" "${SUM%% *}" "${L:-0}" "$N"
cat -- "$T/s" "$T/w" || fail "writing the result"
exit 0
