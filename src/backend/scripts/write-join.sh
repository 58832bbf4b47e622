#!/bin/sh
# The end of a chunked write: joins its parts, checks the whole file's
# SHA-256 and renames the result over the target, in one pass over the
# data (cat | tee | sha256). The parts go in every case; parts of other
# writes untouched for more than a minute (their writer is gone: a live
# one adds a part every few seconds) go first.
#   $1  the workspace root as this shell sees it
#   $2  the target, relative to $1
#   $3  the write's id (its parts are $1/.ocisbx/write-<id>/p000000 ...)
#   $4  the whole file's SHA-256 (lowercase hex)
# Exits 21 when the target is a directory, 10 when the joined file's
# SHA-256 is not $4 (nothing replaced), and fail()s naming any other step.
set -u
W=$1
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
D="$W/.ocisbx/write-$3"
trap 'rm -rf -- "$D"' EXIT
F="$W/$2"
confine "$F"
find "$W/.ocisbx" -mindepth 1 -maxdepth 1 -name 'write-*' ! -name "write-$3" -mmin +1 -exec rm -rf {} + ||
    fail "removing stale parts"
[ -d "$F" ] && exit 21
[ -d "$D" ] || fail "finding the parts"
mkdir -p -- "${F%/*}" 2>"$D/err" || fail "making the target's directory" "$(first_line "$D/err")"
{ cat -- "$D"/p* 2>"$D/cat.err" || echo cat >>"$D/failed"; } |
    { tee -- "$D/joined" 2>"$D/tee.err" || echo tee >>"$D/failed"; } |
    sha256 >"$D/sum" || fail "sha256"
[ -s "$D/failed" ] && fail "joining the parts ($(first_line "$D/failed"))" "$(cat -- "$D/cat.err" "$D/tee.err" | head -c 300)"
read -r SUM _ <"$D/sum" || fail "reading the SHA-256"
[ "$SUM" = "$4" ] || exit 10
mv -f -- "$D/joined" "$F" 2>"$D/err" || fail "renaming over the target" "$(first_line "$D/err")"
exit 0
