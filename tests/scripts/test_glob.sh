#!/bin/sh
# glob.sh: files by -name or -path, not directories, sorted, capped.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
nl='
'
mkdir -p "$W/g/-x/deep" "$W/.ocisbx"
printf 'abc' >"$W/g/a.c"
: >"$W/g/-x/deep/b.c"
: >"$W/g/n${nl}l.c"
: >"$W/g/x.txt"
: >"$W/.ocisbx/h.c"
ln -s a.c "$W/g/link.c"
run glob "$W" . -name '*.c' 100
expect_rc 0 "-name"
printf './g/-x/deep/b.c/f/0\000./g/a.c/f/3\000./g/link.c/l/3\000./g/n\nl.c/f/0\000' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "names, types and sizes"
run glob "$W" ./g -path './g/-x/*' 100
[ "$(tr '\0' '|' <"$T/out")" = "./g/-x/deep/b.c/f/0|" ] || fail "-path"
run glob "$W" ./g -name '*.c' 2
[ "$(tr '\0' '\n' <"$T/out" | grep -c .)" = 2 ] || fail "capped at 2"
run glob "$W" ./g -name '*.none' 100
expect_rc 0 "nothing"
expect_out "" "nothing: empty"
run glob "$W" ./g/a.c -name '*' 100
expect_rc 20 "a file"
run glob "$W" ./none -name '*' 100
expect_rc 3 "missing"
