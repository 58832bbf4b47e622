#!/bin/sh
# search-context.sh: numbered lines of the ranges asked, per file, each
# file ended by a NUL line, long lines cut, a file gone has none.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
mkdir -p "$W/-d"
printf 'l1\nl2\nl3\nl4\nl5\n' >"$W/-d/a b.txt"
printf 'x\nlast line without newline' >"$W/nonl"
run search-context "$W" 100 "./-d/a b.txt" '1,2{=;p};4,9{=;p}' ./nonl '2,3{=;p}' ./gone '1,1{=;p}'
expect_rc 0 "context"
printf '1\nl1\n2\nl2\n4\nl4\n5\nl5\n\n\000\n2\nlast line without newline\n\000\n\n\000\n' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "lines and ends"
run search-context "$W" 3 ./nonl '2,2{=;p}'
printf '2\nlas\n\000\n' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "a cut line"
run search-context "$W" 100
expect_rc 0 "no files"
expect_out "" "no files: empty"
ln -s /etc "$W/out"
run search-context "$W" 100 ./out/hostname '1,1{=;p}'
expect_rc 93 "a symlink out"
