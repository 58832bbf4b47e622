#!/bin/sh
# exec.sh's reaper lists its chunk files while split writes newer ones. A
# directory read made while entries are added may return a chunk split
# began meanwhile and miss an older one begun in the same time (ext4 gives
# a large directory's entries in hash order): the reaper must hash, in
# order, only chunks it knows are complete, never "all but the newest it
# saw". Here the shell runs with readdir_gaps.so ($READDIR_GAPS, loaded
# with LD_PRELOAD): each listing of the chunks waits 10 ms and returns only
# every second chunk of those begun meanwhile. The trailer's total and
# SHA-256 must still be the output's, and the head its first bytes.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work"
mkdir -p "$W"
N=nonce0123456789ab
K=SLOT1
# seq 1 100000: 588895 bytes, in chunks of 996 (a head of 1000): 592
# chunks, a reap (three listings) every ~192
rc=0
LD_PRELOAD=$READDIR_GAPS "$SH" "$SCRIPTS/exec.sh" 'seq 1 100000' "$W" . 60 1 1000 1000 "$N" "$K" 1000 \
    >"$T/out" 2>"$T/err" || rc=$?
expect_rc 0 "gapped listings"
SUM=$(seq 1 100000 | sha256sum)
[ "$(tail -n 1 "$T/err")" = "OCISBX-END $N 0 0 1000 1000 588895 ${SUM%% *}" ] ||
    fail "gapped listings: trailer '$(tail -n 1 "$T/err")'"
seq 1 100000 | head -c 1000 >"$T/expected"
cmp -s "$T/expected" "$T/out" || fail "gapped listings: the head is not the first 1000 bytes"
seq 1 100000 | tail -c 1000 >"$T/expected"
printf '\n' >>"$T/expected"
head -c 1001 "$T/err" | cmp -s "$T/expected" - || fail "gapped listings: the tail is not the last 1000 bytes"
