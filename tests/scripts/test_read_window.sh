#!/bin/sh
# read-window.sh: the header, the first 8 KiB, the window cut per line.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
mkdir -p "$W/-d"
printf 'l1\nl2\nl3\nl4\nl5' >"$W/-d/t x.txt"
run read-window "$W" "-d/t x.txt" 2 3 100
expect_rc 0 "a window"
SUM=$(sha256sum <"$W/-d/t x.txt")
expect_out "OK 14 ${SUM%% *} 5 14
l1
l2
l3
l4
l5l2
l3
" "header, sample, window"
# a long line is cut at the byte count given
printf 'abcdefghij\nshort\n' >"$W/long"
run read-window "$W" long 1 9 4
expect_rc 0 "long line"
tail -n 2 "$T/out" >"$T/w"
printf 'abcd\nshor\n' >"$T/want"
cmp -s "$T/w" "$T/want" || fail "lines cut at 4 bytes"
# an empty file: no lines
: >"$W/empty"
run read-window "$W" empty 1 10 100
expect_rc 0 "empty"
SUM=$(sha256sum </dev/null)
expect_out "OK 0 ${SUM%% *} 0 0
" "empty file"
# binary: the sample holds the NUL for the caller to see
printf 'a\0b' >"$W/bin"
run read-window "$W" bin 1 10 100
expect_rc 0 "binary"
od -An -c "$T/out" | grep -q '\\0' || fail "the NUL byte is in the output"
run read-window "$W" -d 1 10 100
expect_rc 21 "a directory"
run read-window "$W" missing 1 10 100
expect_rc 3 "a missing file"
ln -s /etc/hostname "$W/out"
run read-window "$W" out 1 10 100
expect_rc 93 "a symlink out"
[ ! -d "$W/.ocisbx/tmp" ] || [ -z "$(ls -A "$W/.ocisbx/tmp")" ] || fail "the temporary directory stays"
