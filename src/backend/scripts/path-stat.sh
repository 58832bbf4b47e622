#!/bin/sh
# What one path of the workspace is, after the confinement check: prints
# the size of a regular file; exits 21 for a directory, 3 when nothing is
# there, 4 for anything else (a FIFO, a device, a socket).
#   $1  the workspace root as this shell sees it
#   $2  the path, relative to $1 ("." for the root)
set -u
W=$1
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
F="$W/$2"
confine "$F"
[ -d "$F" ] && exit 21
[ -e "$F" ] || exit 3
[ -f "$F" ] || exit 4
S=$(stat -L -c %s -- "$F") || fail "stat of $2"
printf '%s\n' "$S"
