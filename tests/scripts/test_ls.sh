#!/bin/sh
# ls.sh: one page of a directory, .ocisbx left out at the root.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
nl='
'
mkdir -p "$W/d/sub" "$W/.ocisbx"
printf 'ab' >"$W/d/-a"
: >"$W/d/b c"
: >"$W/d/n${nl}l"
run ls "$W" ./d 0 10
expect_rc 0 "ls"
printf -- '-a/f/2\000b c/f/0\000n\nl/f/0\000sub/d/' >"$T/want"
head -c "$(wc -c <"$T/want")" "$T/out" | cmp -s "$T/want" - || fail "entries"
run ls "$W" ./d 1 2
[ "$(tr '\0' '\n' <"$T/out" | cut -d/ -f1 | tr '\n' '|')" = "b c|n|l|" ] || fail "page 2 of 2"
run ls "$W" ./d 9 2
expect_rc 0 "past the end"
expect_out "" "past the end: empty"
run ls "$W" . 0 10
tr '\0' '\n' <"$T/out" | grep -q '^\.ocisbx/' && fail ".ocisbx is listed"
run ls "$W" ./d/-a 0 10
expect_rc 20 "a file"
run ls "$W" ./none 0 10
expect_rc 3 "missing"
ln -s /etc "$W/out"
run ls "$W" ./out 0 10
expect_rc 93 "a symlink out"
