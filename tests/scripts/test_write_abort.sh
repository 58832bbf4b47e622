#!/bin/sh
# write-abort.sh: removes one write's parts, also a part that lands after
# the first removal (a late write of the service), and nothing else.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
mkdir -p "$W/.ocisbx/write-abc/sub" "$W/.ocisbx/write-keep"
: >"$W/.ocisbx/write-abc/p000000"
# a late part: it comes back 200 ms after the script started (the script
# removes it at once, then watches 500 ms of quiet)
(sleep 0.2 && mkdir -p "$W/.ocisbx/write-abc" && : >"$W/.ocisbx/write-abc/p000003") &
run write-abort "$W" abc
wait
expect_rc 0 "parts there"
expect_no_file "$W/.ocisbx/write-abc" "removed, the late part too"
expect_file "$W/.ocisbx/write-keep" "another write's parts stay"
run write-abort "$W" never
expect_rc 0 "nothing there"
expect_out "" "no output"
