#!/bin/sh
# job-start.sh, job-run.sh, job-status.sh, job-output.sh on a workspace
# with spaces and a leading dash in its path.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/-work space"
mkdir -p "$W/sub dir"
J1=job-aaaaaaaaaaaaaaaa
J="$W/.ocisbx/jobs/$J1"

run job-start "$W" "$J1" "no such"
expect_rc 3 "start in a missing cwd"
run job-start "$W" "$J1" "sub dir"
expect_rc 0 "start"
expect_file "$J/start" "start"
expect_file "$J/out" "start"
run job-status "$W" "$J1" 0
expect_rc 0 "status before the run"
case $(cat "$T/out") in "JOB 1 - 0 0 "*" 0") ;; *) fail "status before the run: $(cat "$T/out")" ;; esac

run job-run 'pwd; printf "\377\000"; echo err >&2; exit 4' "$W" "$J1" "sub dir" 10 1
expect_rc 4 "run: the job runner exits with the command's status"
printf '%s\n\377\000err\n' "$W/sub dir" >"$T/expected"
cmp -s "$T/expected" "$J/out" || fail "run: the merged output is not byte exact"
[ "$(cat "$J/status")" = "4 0" ] || fail "run: status '$(cat "$J/status")'"
run job-status "$W" "$J1" 0
case $(cat "$T/out") in "JOB 0 4 0 0 "*) ;; *) fail "status after the run: $(cat "$T/out")" ;; esac

# output windows: from an offset, the last N bytes, with the SHA-256
B=$(wc -c <"$J/out")
run job-output "$W" "$J1" 2 3 w-one 0
expect_out "$B
" "output size"
tail -c +3 "$J/out" | head -c 3 | cmp -s - "$J/w-one" || fail "window from offset 2"
run job-output "$W" "$J1" -1 4 w-two 1
SUM=$(sha256sum <"$J/out")
expect_out "$B ${SUM%% *}
" "output size and sum"
expect_no_file "$J/w-one" "the earlier window"
tail -c 4 "$J/out" | cmp -s - "$J/w-two" || fail "the last 4 bytes"
run job-output "$W" "$J1" 1000 10 w-three 0
[ ! -s "$J/w-three" ] || fail "offset past the end: not empty"
run job-output "$W" job-bbbbbbbbbbbbbbbb 0 10 w-x 0
expect_rc 3 "output of a missing job"
run job-status "$W" job-bbbbbbbbbbbbbbbb 0
expect_rc 3 "status of a missing job"

# timed out; killed; a wait that ends at the end (the timed-out job runs
# beside the other two: each waits a second)
J2=job-cccccccccccccccc
run job-start "$W" "$J2" .
"$SH" "$SCRIPTS/job-run.sh" 'sleep 30' "$W" "$J2" . 1 1 >"$T/out2" 2>"$T/err2" &
P2=$!
J3=job-dddddddddddddddd
run job-start "$W" "$J3" .
: >"$W/.ocisbx/jobs/$J3/killed"
run job-status "$W" "$J3" 5000
case $(cat "$T/out") in "JOB 0 - 0 1 "*) ;; *) fail "killed: $(cat "$T/out")" ;; esac
J4=job-eeeeeeeeeeeeeeee
run job-start "$W" "$J4" .
"$SH" "$SCRIPTS/job-run.sh" 'sleep 1' "$W" "$J4" . 10 1 &
run job-status "$W" "$J4" 20000
case $(cat "$T/out") in "JOB 0 0 0 0 "*) ;; *) fail "wait for the end: $(cat "$T/out")" ;; esac
rc=0
wait "$P2" || rc=$?
expect_rc 124 "timed out: the job runner's status"
[ "$(cat "$W/.ocisbx/jobs/$J2/status")" = "124 1" ] || fail "timed out: status '$(cat "$W/.ocisbx/jobs/$J2/status")'"
wait

# the user's env is the command's only: timeout still runs, the status is
# the command's, no timeout is guessed
J5=job-ffffffffffffffff
run job-start "$W" "$J5" .
# shellcheck disable=SC2016 # the command's own $PATH
for e in PATH=/opt/x LD_PRELOAD=/nonexist.so; do
    rc=0
    env "$e" "$SH" "$SCRIPTS/job-run.sh" 'echo "$PATH"; exit 3' "$W" "$J5" . 10 1 >"$T/out" 2>"$T/err" || rc=$?
    expect_rc 3 "$e: the job runner's status"
    [ "$(cat "$W/.ocisbx/jobs/$J5/status")" = "3 0" ] || fail "$e: status '$(cat "$W/.ocisbx/jobs/$J5/status")'"
done
# shellcheck disable=SC2016
env PATH=/opt/x "$SH" "$SCRIPTS/job-run.sh" 'echo "$PATH"' "$W" "$J5" . 10 1 >"$T/out" 2>"$T/err"
[ "$(cat "$W/.ocisbx/jobs/$J5/out")" = /opt/x ] || fail "the job's PATH: '$(cat "$W/.ocisbx/jobs/$J5/out")'"
