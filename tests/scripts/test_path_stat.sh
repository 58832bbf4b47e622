#!/bin/sh
# path-stat.sh: the size of a file; 21 a directory, 3 nothing, 4 a FIFO,
# 93 a symlink out of the workspace.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
mkdir -p "$W/-dir" "$W/sub"
printf 'abc' >"$W/-dir/a b"
printf '' >"$W/empty"
nl='
'
printf 'x\0y' >"$W/sub/new${nl}line"
mkfifo "$W/fifo"
ln -s /etc "$W/out"
ln -s sub "$W/in"

run path-stat "$W" "-dir/a b"
expect_rc 0 "a file with a space under a dash directory"
expect_out "3
" "its size"
run path-stat "$W" empty
expect_rc 0 "an empty file"
expect_out "0
" "its size"
run path-stat "$W" "in/new${nl}line"
expect_rc 0 "a binary file with a newline in its name, through a link inside"
expect_out "3
" "its size"
run path-stat "$W" -dir
expect_rc 21 "a directory"
run path-stat "$W" .
expect_rc 21 "the root"
run path-stat "$W" missing
expect_rc 3 "a missing file"
run path-stat "$W" fifo
expect_rc 4 "a FIFO"
run path-stat "$W" out/passwd
expect_rc 93 "a symlink out of the workspace"
run path-stat "$W" ../x
expect_rc 93 "a path above the workspace"
