#!/bin/sh
# Files (not directories) under a path of the workspace whose name matches,
# $1/.ocisbx skipped, in byte order, at most a number of them.
#   $1  the workspace root as this shell sees it
#   $2  where to look, as find starts from $1: "." or "./<path>"
#   $3  the find test that selects by name: -name or -path
#   $4  its pattern (for -path: "./<path>/<glob>")
#   $5  the most entries to print
# Prints "<path>/<type>/<size>\0" per entry (find's %p/%y/%s; paths as find
# gives them, "./..."). Exits 3 when $2 does not exist, 20 when it is not a
# directory, and fail()s naming any other step that fails.
set -u
W=$1
START=$2
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
enter_dir "$START"
use_tmp glob
find_sorted "$T/sorted" "$START" -path ./.ocisbx -prune -o ! -type d "$3" "$4" -printf '%p/%y/%s\0'
head -z -n "$5" -- "$T/sorted" || fail "writing the result"
exit 0
