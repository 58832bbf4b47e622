#!/bin/sh
# search.sh: the three modes, paging, odd names, binary files skipped,
# .ocisbx skipped, a refused pattern, a missing path, big trees sorted
# with TMPDIR in the workspace.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
nl='
'
mkdir -p "$W/s/-dash dir" "$W/.ocisbx" "$W/s/sub"
printf 'no\nneedle 1\nneedle 2\n' >"$W/s/a.txt"
printf 'needle\n' >"$W/s/-dash dir/b c.txt"
printf 'needle\n' >"$W/s/new${nl}line.txt"
printf 'needle\0binary\n' >"$W/s/bin.dat"
printf 'needle\n' >"$W/.ocisbx/hidden"
printf 'nothing\n' >"$W/s/sub/z.txt"
C=12096

# content: path NUL "n:text" NUL, sorted bytewise
run search "$W" . "" "" -F 0 content 0 100 "$C" needle
expect_rc 0 "content"
printf './s/-dash dir/b c.txt\0001:needle\000./s/a.txt\0002:needle 1\000./s/a.txt\0003:needle 2\000./s/new\nline.txt\0001:needle\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "content records"

# paging: skip 1, keep 2
run search "$W" ./s "" "" -F 0 content 1 2 "$C" needle
printf './s/a.txt\0002:needle 1\000./s/a.txt\0003:needle 2\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "content page"

# files and count
run search "$W" ./s "" "" -E 0 files 0 100 "$C" 'need+le'
printf './s/-dash dir/b c.txt\000./s/a.txt\000./s/new\nline.txt\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "files"
run search "$W" ./s "" "" -E 1 count 1 5 "$C" 'NEEDLE'
printf './s/a.txt\0002\000./s/new\nline.txt\0001\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "count, ignoring case, from the second file"

# a name filter, a path filter
run search "$W" ./s -name '*.txt' -F 0 files 0 100 "$C" needle
[ "$(tr '\0' '|' <"$T/out")" = "./s/-dash dir/b c.txt|./s/a.txt|./s/new${nl}line.txt|" ] || fail "-name"
run search "$W" ./s -path './s/-dash dir/*' -F 0 files 0 100 "$C" needle
[ "$(tr '\0' '|' <"$T/out")" = "./s/-dash dir/b c.txt|" ] || fail "-path"

# nothing found: empty output, status 0
run search "$W" ./s "" "" -F 0 content 0 100 "$C" 'not there'
expect_rc 0 "no match"
expect_out "" "no match: empty"

# a pattern grep refuses: 22 with grep's message
run search "$W" . "" "" -E 0 content 0 100 "$C" 'a['
expect_rc 22 "a refused pattern"
[ -s "$T/out" ] || fail "grep's message"
run search "$W" ./missing "" "" -F 0 content 0 100 "$C" x
expect_rc 3 "a missing path"
# a single file as the path
run search "$W" ./s/a.txt "" "" -F 0 count 0 100 "$C" needle
printf './s/a.txt\0002\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "one file"
ln -s /etc "$W/out"
run search "$W" ./out "" "" -F 0 content 0 100 "$C" root
expect_rc 93 "a symlink out"

# a file grep cannot read fails the search, naming grep (not as root:
# root reads it anyway)
if [ "$(id -u)" != 0 ]; then
    printf 'needle\n' >"$W/s/sub/locked"
    chmod 000 "$W/s/sub/locked"
    run search "$W" ./s/sub "" "" -F 0 content 0 100 "$C" needle
    expect_rc 94 "an unreadable file"
    grep -q '^grep failed' "$T/err" || fail "the step is grep"
    chmod 644 "$W/s/sub/locked"
fi

# a step that fails becomes an error naming it, never an empty answer: a
# sort that cannot write its temporary files
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "sort: cannot create temporary file" >&2\nexit 2\n' >"$T/bin/sort"
chmod +x "$T/bin/sort"
rc=0
PATH="$T/bin:$PATH" "$SH" "$SCRIPTS/search.sh" "$W" . "" "" -F 0 content 0 100 "$C" needle >"$T/out" 2>"$T/err" || rc=$?
expect_rc 94 "sort failing"
grep -q '^sort failed: sort: cannot create temporary file' "$T/err" || fail "sort is named"

# the temporary directory is removed
[ -z "$(ls -A "$W/.ocisbx/tmp" 2>/dev/null)" ] || fail "the temporary directory stays"
