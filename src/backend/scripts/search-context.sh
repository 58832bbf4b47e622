#!/bin/sh
# The context lines of a page of search matches: for each file, the lines
# of the ranges the caller merged, each line as its number then its text.
#   $1  the workspace root as this shell sees it
#   $2  the longest line kept, in bytes (longer lines are cut)
#   then pairs: a path as search.sh printed it ("./..."), and a sed
#   program printing its ranges with their numbers ("3,9{=;p};20,26{=;p}")
# Prints, per pair, "<n>\n<text>\n" per line, then a line holding one NUL
# (a file without a final newline ends its last text at that line; an
# empty line where a number is due is not one). A file gone since the
# search has no lines.
set -u
W=$1
CUT=$2
shift 2
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
capture
cd "$W" || fail "cd to the workspace"
use_tmp context
while [ "$#" -ge 2 ]; do
    confine "$W/$1"
    if [ -f "$1" ]; then
        LC_ALL=C sed -n -e "$2" -- "$1" 2>"$T/err" || fail "sed" "$(first_line "$T/err")"
    fi
    printf '\n\000\n'
    shift 2
done >"$T/lines"
LC_ALL=C cut -b "1-$CUT" -- "$T/lines" || fail "writing the result"
exit 0
