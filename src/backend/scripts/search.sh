#!/bin/sh
# One page of a content search (find, sort, grep) under a path of the
# workspace, $1/.ocisbx skipped, binary files skipped. Every name and field
# is NUL-terminated, so any byte but NUL passes.
#   $1  the workspace root as this shell sees it
#   $2  where to search, as find starts from $1: "." or "./<path>"
#   $3  "" or the find test that selects files by name: -name or -path
#   $4  its pattern (for -path: "./<path>/<glob>")
#   $5  -E (an extended regular expression) or -F (a fixed string)
#   $6  1: ignore case
#   $7  content, files or count
#   $8  the entries to skip
#   $9  the most entries to print after them
#   $10 the longest field kept, in bytes (longer lines are cut)
#   $11 the pattern
# Prints (paths as find gives them, "./..."):
#   content  "<path>\0<line number>:<text>\0" per matching line
#   files    "<path>\0" per file with a match
#   count    "<path>\0<matching lines>\0" per file with a match
# Exits 3 when $2 does not exist, 22 when grep refuses the pattern (its
# message on stdout), and fail()s naming any other step that fails.
set -u
W=$1
START=$2
FTEST=$3
FPAT=$4
KIND=$5
ICASE=$6
MODE=$7
OFF=$8
LIM=$9
CUT=${10}
PAT=${11}
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
confine "$W/$START"
capture
cd "$W" || fail "cd to the workspace"
[ -e "$START" ] || exit 3
use_tmp search
CASE=
[ "$ICASE" = 1 ] && CASE=-i

# the pattern, alone: a pattern grep refuses is the caller's mistake
rc=0
printf 'x\n' | grep "$KIND" ${CASE:+"$CASE"} -e "$PAT" >/dev/null 2>"$T/pat" || rc=$?
if [ "$rc" -gt 1 ]; then
    first_line "$T/pat"
    exit 22
fi

# the files, sorted bytewise
find_sorted "$T/files" "$START" -path ./.ocisbx -prune -o -type f ${FTEST:+"$FTEST" "$FPAT"} -print0

# greps FILE OPTIONS...: grep OPTIONS -- <the files listed in FILE>, by
# xargs; a grep that fails (status 2) leaves $T/grep.failed; one killed by
# a closed pipe (the page is full) stops xargs quietly.
greps() {
    _list=$1
    shift
    # shellcheck disable=SC2016 # the inner script expands its own $0 and $@
    xargs -0 -r sh -c '
        grep "$@" 2>>"$0/grep.err"
        r=$?
        [ "$r" -le 1 ] && exit 0
        [ "$r" = 2 ] && : >"$0/grep.failed"
        exit 255' "$T" "$@" -- <"$_list" 2>>"$T/xargs.err"
    _r=$?
    [ "$_r" = 0 ] || [ "$_r" = 124 ] || [ "$_r" = 125 ] || echo "xargs (status $_r)" >>"$T/failed"
}

# the step that failed, if any
check() {
    [ -e "$T/grep.failed" ] && fail "grep" "$(first_line "$T/grep.err")"
    [ -s "$T/failed" ] && fail "$(first_line "$T/failed")"
    return 0
}

case $MODE in
content)
    # "<path>\0<n>:<text>\n" from grep; the newline after each text (the
    # first one in every NUL-field but the first) becomes a NUL
    { greps "$T/files" -I -n -H -Z "$KIND" ${CASE:+"$CASE"} -e "$PAT"; } |
        { LC_ALL=C sed -z '2,$s/\n/\x00/' || [ $? -ge 128 ] || echo sed >>"$T/failed"; } |
        page "$((OFF * 2))" "$((LIM * 2))" | cut -z -b "1-$CUT" || echo "writing the result" >>"$T/failed"
    ;;
files)
    { greps "$T/files" -I -l -Z "$KIND" ${CASE:+"$CASE"} -e "$PAT"; } | page "$OFF" "$LIM" ||
        echo "writing the result" >>"$T/failed"
    ;;
count)
    { greps "$T/files" -I -l -Z "$KIND" ${CASE:+"$CASE"} -e "$PAT"; } | page "$OFF" "$LIM" >"$T/page" ||
        echo "writing the page" >>"$T/failed"
    check
    # "<path>\0<count>\n" from grep -c
    greps "$T/page" -I -c -H -Z "$KIND" ${CASE:+"$CASE"} -e "$PAT" >"$T/counts"
    LC_ALL=C sed -z '2,$s/\n/\x00/' "$T/counts" || fail "writing the result"
    ;;
*) fail "mode" "unknown mode $MODE" ;;
esac
check
exit 0
