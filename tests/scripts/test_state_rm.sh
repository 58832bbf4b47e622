#!/bin/sh
# state-rm.sh: removes one name under .ocisbx, and only it.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
mkdir -p "$W/.ocisbx/write-abc/sub" "$W/.ocisbx/keep"
: >"$W/.ocisbx/q-1"
run state-rm "$W" write-abc
expect_rc 0 "a directory"
expect_no_file "$W/.ocisbx/write-abc" "removed"
expect_file "$W/.ocisbx/keep" "the others stay"
run state-rm "$W" q-1
expect_no_file "$W/.ocisbx/q-1" "a file"
run state-rm "$W" never-there
expect_rc 0 "nothing there"
expect_out "" "no output"
