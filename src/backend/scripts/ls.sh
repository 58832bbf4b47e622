#!/bin/sh
# One page of the entries of a directory of the workspace ($1/.ocisbx
# left out), in byte order of the names.
#   $1  the workspace root as this shell sees it
#   $2  the directory, as find starts from $1: "." or "./<path>"
#   $3  the entries to skip
#   $4  the most entries to print after them
# Prints "<name>/<type>/<size>\0" per entry (find's %f/%y/%s). Exits 3
# when $2 does not exist, 20 when it is not a directory, and fail()s naming
# any other step that fails.
set -u
W=$1
START=$2
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
enter_dir "$START"
use_tmp ls
find_sorted "$T/sorted" "$START" -mindepth 1 -maxdepth 1 ! -path ./.ocisbx -printf '%f/%y/%s\0'
page "$3" "$4" <"$T/sorted" || fail "writing the result"
[ -s "$T/failed" ] && fail "$(first_line "$T/failed")"
exit 0
