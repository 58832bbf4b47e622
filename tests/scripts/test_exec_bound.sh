#!/bin/sh
# exec.sh's disk bound: when the reaper falls behind, its full pipe from
# split stops split (and the command), so a few hundred chunks at most wait
# on disk however much the command prints. Here the reaper's first cat
# (a shim first on OCISBX_TOOLS_PATH) waits until the number of chunk files
# has stayed the same for 0.3 s (split stopped, or done) and records it:
# 2 MB in chunks of 996 bytes are some 2000 chunks; at most 400 may be
# there at once. The trailer's total and SHA-256 stay the output's.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work"
mkdir -p "$W" "$T/tools"
N=nonce0123456789ab
K=SLOT1
CAT=$(command -v cat)
cat >"$T/tools/cat" <<EOF
#!/bin/sh
chunks() { set -- '$W/.ocisbx/run-$K.o.'*; echo "\$#"; }
if [ ! -e '$T/stalled' ]; then
    : >'$T/stalled'
    n=-1 same=0
    while [ "\$same" -lt 6 ]; do
        c=\$(chunks)
        if [ "\$c" = "\$n" ]; then same=\$((same + 1)); else same=0 n=\$c; fi
        sleep 0.05
    done
    echo "\$n" >'$T/most'
fi
exec '$CAT' "\$@"
EOF
chmod +x "$T/tools/cat"
rc=0
OCISBX_TOOLS_PATH="$T/tools:/usr/bin:/bin" "$SH" "$SCRIPTS/exec.sh" 'head -c 2000000 /dev/zero' "$W" . 60 1 1000 1000 \
    "$N" "$K" 1000 >"$T/out" 2>"$T/err" || rc=$?
expect_rc 0 "2 MB, the reaper behind"
SUM=$(head -c 2000000 /dev/zero | sha256sum)
[ "$(tail -n 1 "$T/err")" = "OCISBX-END $N 0 0 1000 1000 2000000 ${SUM%% *}" ] ||
    fail "2 MB, the reaper behind: trailer '$(tail -n 1 "$T/err")'"
[ -s "$T/most" ] || fail "the reaper's cat was not the shim"
most=$(cat "$T/most")
[ "$most" -le 400 ] || fail "the disk bound: $most chunks waited at once"
# split went ahead of the reaper (the chunks of a block of lines, ~192,
# the pipe's, ~96): the bound was what stopped it
[ "$most" -gt 100 ] || fail "the disk bound: only $most chunks waited (the reaper was not behind)"
