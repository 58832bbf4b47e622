#!/bin/sh
# exec.sh: the wrapper, on a workspace whose path has spaces, a newline and
# a leading dash; the live head on stdout, the trailer last on stderr.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space/-x
y"
mkdir -p "$W/sub dir"
N=nonce0123456789ab
K=SLOT1
# wrap CMD [SECS [H [TT [CWD]]]]: runs the wrapper (grace 1 s, now 1000)
wrap() {
    run exec "$1" "$W" "${5:-.}" "${2:-10}" 1 "${3:-100}" "${4:-100}" "$N" "$K" 1000
}
# bg NAME SECS CMD [ENV...]: the wrapper on a workspace of its own, in the
# background (the runs that wait for their timeout run beside the rest);
# bg_wait NAME: waits for it, its status in $rc, its stdout and stderr
# where run puts them
bg() {
    _n=$1 _s=$2 _c=$3
    shift 3
    mkdir -p "$T/bg-$_n space"
    env "$@" "$SH" "$SCRIPTS/exec.sh" "$_c" "$T/bg-$_n space" . "$_s" 1 100 100 "$N" "$K" 1000 \
        >"$T/bg-$_n.out" 2>"$T/bg-$_n.err" &
    eval "bg_pid_$_n=\$!"
}
bg_wait() {
    rc=0
    eval "wait \"\$bg_pid_$1\"" || rc=$?
    cp "$T/bg-$1.out" "$T/out"
    cp "$T/bg-$1.err" "$T/err"
}
bg timeout 1 'echo before; sleep 30'
bg timeout124 1 'sleep 30'
bg nopath 1 'while :; do echo y; done' -u LC_ALL PATH=/nonexist
# trailer: the last line of stderr
trailer() { tail -n 1 "$T/err"; }
expect_trailer() {
    [ "$(trailer)" = "$1" ] || fail "$2: trailer '$(trailer)', expected '$1'"
}

wrap true
expect_rc 0 "empty output"
expect_out "" "empty output"
expect_trailer "OCISBX-END $N 0 0 - - - -" "empty output"
printf '\nOCISBX-END %s 0 0 - - - -\n' "$N" >"$T/expected"
cmp -s "$T/expected" "$T/err" || fail "empty output: stderr is more than the trailer"

wrap 'echo out; echo err >&2; exit 7'
expect_out "out
err
" "merged output"
expect_trailer "OCISBX-END $N 7 0 - - - -" "exit status"

wrap "printf '\\377\\000x'"
printf '\377\000x' >"$T/expected"
cmp -s "$T/expected" "$T/out" || fail "binary output: not byte exact"

wrap pwd 10 100 100 "sub dir"
expect_out "$W/sub dir
" "cwd with a space"

wrap pwd 10 100 100 "no such"
expect_rc 0 "missing cwd"
expect_out "" "missing cwd"
expect_trailer "OCISBX-NOCWD $N" "missing cwd"

# shellcheck disable=SC2016 # the command's own $1 and $ox_w
wrap 'printf "%s|" "${1:-}" "${ox_w:-}"; printf "%s\n" -n' 10 100 100
expect_out "||-n
" "the command sees neither the wrapper's arguments nor its variables"

# more than the live head (46 bytes): head 50, tail 60, total and SHA-256
wrap 'seq 1 100' 10 50 60
seq 1 100 | head -c 50 >"$T/expected"
cmp -s "$T/expected" "$T/out" || fail "cut: the head is not the first 50 bytes"
SUM=$(seq 1 100 | sha256sum)
expect_trailer "OCISBX-END $N 0 0 50 60 292 ${SUM%% *}" "cut"
seq 1 100 | tail -c 60 >"$T/expected"
printf '\n' >>"$T/expected"
head -c 61 "$T/err" | cmp -s "$T/expected" - || fail "cut: the tail is not the last 60 bytes"

# the head ends on a UTF-8 boundary, the tail starts on one
wrap "i=0; while [ \$i -lt 40 ]; do printf '\\303\\251'; i=\$((i+1)); done" 10 41 41
[ "$(wc -c <"$T/out")" = 40 ] || fail "utf-8 head: $(wc -c <"$T/out") bytes, expected 40"
case "$(trailer)" in "OCISBX-END $N 0 0 40 40 80 "*) ;; *) fail "utf-8: trailer '$(trailer)'" ;; esac

# output just over the live head but within the head budget: all of it
wrap 'printf 1234567890' 10 12 20
expect_out "1234567890" "within the budget"
case "$(trailer)" in "OCISBX-END $N 0 0 10 0 10 "*) ;; *) fail "within the budget: trailer '$(trailer)'" ;; esac

# the timeout: no exit status of the command's own, timed out
bg_wait timeout
expect_out "before
" "timeout"
expect_trailer "OCISBX-END $N 124 1 - - - -" "timeout"

# what the command leaves in the background ends with it (the run returns)
wrap 'sleep 30 & echo bg' 20
expect_out "bg
" "background child"

# run files: this slot's are kept empty between runs; another slot's stale
# ones (past their deadline by a minute) go, a live one's stay
S="$W/.ocisbx"
set -- "$S/run-$K.o.aa"*
[ -e "$1" ] && [ ! -s "$1" ] || fail "the run file is missing or still holds output"
printf 'R 900\n' >"$S/run-OLD.busy"
echo raw >"$S/run-OLD.o.aa"
printf 'R 5000\n' >"$S/run-LIVE.busy"
printf 'I 100\n' >"$S/run-IDLE.busy"
wrap true
expect_no_file "$S/run-OLD.busy" "stale slot"
expect_no_file "$S/run-OLD.o.aa" "stale slot"
expect_no_file "$S/run-IDLE.busy" "idle slot"
expect_file "$S/run-LIVE.busy" "live slot"

# output files of a slot without a busy file: gone when a minute old
echo raw >"$S/run-GONE.o.ae"
touch -d '2 minutes ago' "$S/run-GONE.o.ae"
echo raw >"$S/run-NEW.o.aa"
wrap true
expect_no_file "$S/run-GONE.o.ae" "orphaned chunk"
expect_file "$S/run-NEW.o.aa" "a fresh file without busy"
rm -f "$S/run-NEW.o.aa"

# the wrapper's exit status is the command's: 124 for the timeout, 128 + N
# for a signal (the trailer says the same)
wrap 'exit 3'
expect_rc 3 "exit 3"
expect_trailer "OCISBX-END $N 3 0 - - - -" "exit 3"
wrap 'kill -9 $$'
expect_rc 137 "killed"
expect_trailer "OCISBX-END $N 137 0 - - - -" "killed"
bg_wait timeout124
expect_rc 124 "timed out"
# the command's own 124 is no timeout
wrap 'exit 124'
expect_rc 124 "exit 124"
expect_trailer "OCISBX-END $N 124 0 - - - -" "exit 124"

# the user's env reaches the command only: the wrapper's programs run with
# their own PATH and without the user's loader variables
# wrap_env ENV... -- CMD [SECS]
wrap_env() {
    _e=
    while [ "$1" != -- ]; do
        _e="$_e $1"
        shift
    done
    shift
    rc=0
    # shellcheck disable=SC2086 # the assignments, one word each
    env -u LC_ALL $_e "$SH" "$SCRIPTS/exec.sh" "$1" "$W" . "${2:-10}" 1 100 100 "$N" "$K" 1000 >"$T/out" 2>"$T/err" ||
        rc=$?
}
wrap_env PATH=/nonexist -- 'echo hi; exit 3'
expect_rc 3 "PATH=/nonexist"
expect_out "hi
" "PATH=/nonexist"
expect_trailer "OCISBX-END $N 3 0 - - - -" "PATH=/nonexist"
wrap_env LD_PRELOAD=/nonexist.so -- 'echo hi; exit 3'
expect_rc 3 "LD_PRELOAD"
expect_trailer "OCISBX-END $N 3 0 - - - -" "LD_PRELOAD"
# shellcheck disable=SC2016 # the command's own variables
wrap_env PATH=/opt/x LD_LIBRARY_PATH=/opt/lib LANG=C.UTF-8 -- \
    'printf "%s|%s|%s|%s|%s\n" "$PATH" "$LD_LIBRARY_PATH" "$LANG" "${LC_ALL-unset}" "${OCISBX_U_PATH-none}"'
expect_out "/opt/x|/opt/lib|C.UTF-8|unset|none
" "the command's env"
expect_trailer "OCISBX-END $N 0 0 - - - -" "the command's env"
bg_wait nopath
expect_rc 124 "PATH=/nonexist, timed out"
case "$(trailer)" in "OCISBX-END $N 124 1 "*) ;; *) fail "PATH=/nonexist, timed out: trailer '$(trailer)'" ;; esac


# endless output: nothing past the head is stored, the result is exact (du's
# complaints about chunks the reaper deletes under it are not the output).
# 2 MB in chunks of 996 bytes: about 8000 KiB on disk if all were kept, four
# times the bound (some hundreds of chunks wait, 350-600 KiB here)
wrap "head -c 2000000 /dev/zero; du -sk '$S' 2>/dev/null | head -n 1 | cut -f1 >'$T/du'" 60 1000 1000
expect_rc 0 "2 MB"
SUM=$(head -c 2000000 /dev/zero | sha256sum)
expect_trailer "OCISBX-END $N 0 0 1000 1000 2000000 ${SUM%% *}" "2 MB"
[ "$(cat "$T/du")" -lt 2000 ] || fail "2 MB: the run files held $(cat "$T/du") KiB during the run"
[ "$(wc -c <"$T/out")" = 1000 ] || fail "2 MB: the head is $(wc -c <"$T/out") bytes"
wrap yes 1 1000 1000
expect_rc 124 "yes"
case "$(trailer)" in "OCISBX-END $N 124 1 1000 1000 "*) ;; *) fail "yes: trailer '$(trailer)'" ;; esac
set -- "$S"/run-"$K".*
for f in "$@"; do
    [ ! -s "$f" ] || [ "${f##*.}" = busy ] || [ "${f##*.}" = st ] ||
        fail "yes: $f left with $(wc -c <"$f") bytes"
done
