#!/bin/sh
# job-kill.sh: marks a job without an exit status killed, leaves an ended one.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
J="$W/.ocisbx/jobs/job-abcdefghijklmnop"
mkdir -p "$J"
run job-kill "$W" job-abcdefghijklmnop
expect_rc 0 "running job"
expect_file "$J/killed" "running job"
grep -Eq '^[0-9]{13}$' "$J/end" || fail "running job: end time '$(cat "$J/end")'"

J2="$W/.ocisbx/jobs/job-0000000000000000"
mkdir -p "$J2"
echo 0 >"$J2/status"
run job-kill "$W" job-0000000000000000
expect_rc 0 "ended job"
expect_no_file "$J2/killed" "ended job"
expect_no_file "$J2/end" "ended job"

# a job whose state directory is gone: the failure shows
run job-kill "$W" job-1111111111111111
[ "$rc" != 0 ] || fail "missing state directory: exit status 0"
