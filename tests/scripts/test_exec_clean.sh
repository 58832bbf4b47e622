#!/bin/sh
# exec-clean.sh: a slot's run files go, nothing else.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/-w s"
mkdir -p "$W/.ocisbx"
: >"$W/.ocisbx/run-AB12.busy"
echo raw >"$W/.ocisbx/run-AB12.o.aa"
: >"$W/.ocisbx/run-CD34.busy"
run exec-clean "$W" AB12
expect_rc 0 "clean"
expect_no_file "$W/.ocisbx/run-AB12.busy" "clean"
expect_no_file "$W/.ocisbx/run-AB12.o.aa" "clean"
expect_file "$W/.ocisbx/run-CD34.busy" "another slot"
run exec-clean "$T/missing" AB12
expect_rc 0 "no state directory"
