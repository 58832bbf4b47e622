#!/bin/sh
# write-join.sh: joins, checks, renames; removes its parts in every case
# and stale parts of other writes.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

W="$T/work space"
D="$W/.ocisbx/write-aaaaaaaaaaaaaaaa"
mkdir -p "$D"
printf 'one ' >"$D/p000000"
printf 'two\n' >"$D/p000001"
SUM=$(printf 'one two\n' | sha256sum)
SUM=${SUM%% *}
# a stale write (untouched for two minutes) and a live one
mkdir -p "$W/.ocisbx/write-stalestalestale1" "$W/.ocisbx/write-livelivelivelive"
: >"$W/.ocisbx/write-stalestalestale1/p000000"
touch -d '2 minutes ago' "$W/.ocisbx/write-stalestalestale1"
run write-join "$W" "-new dir/t x.txt" aaaaaaaaaaaaaaaa "$SUM"
expect_rc 0 "join"
[ "$(cat "$W/-new dir/t x.txt")" = "one two" ] || fail "the joined content"
expect_no_file "$D" "the parts"
expect_no_file "$W/.ocisbx/write-stalestalestale1" "the stale parts"
expect_file "$W/.ocisbx/write-livelivelivelive" "the live write's parts"

# a wrong SHA-256: nothing replaced, parts gone
mkdir -p "$D"
printf 'other\n' >"$D/p000000"
run write-join "$W" "-new dir/t x.txt" aaaaaaaaaaaaaaaa "$SUM"
expect_rc 10 "a wrong SHA-256"
[ "$(cat "$W/-new dir/t x.txt")" = "one two" ] || fail "the old file stays"
expect_no_file "$D" "the parts after a mismatch"

# a directory as the target
mkdir -p "$D" "$W/adir"
printf 'x' >"$D/p000000"
run write-join "$W" adir aaaaaaaaaaaaaaaa "$SUM"
expect_rc 21 "a directory target"
expect_no_file "$D" "the parts after a directory"

# the target's directory cannot be made: a step failure that names it
mkdir -p "$D"
printf 'one two\n' >"$D/p000000"
printf 'file' >"$W/afile"
run write-join "$W" afile/sub/x aaaaaaaaaaaaaaaa "$SUM"
expect_rc 94 "mkdir over a file"
grep -q "making the target's directory failed" "$T/err" || fail "the step is named"
expect_no_file "$D" "the parts after a failed step"

# no parts at all
run write-join "$W" x aaaaaaaaaaaaaaaa "$SUM"
expect_rc 94 "no parts"
grep -q "finding the parts failed" "$T/err" || fail "the missing parts are named"

# a symlink out of the workspace
mkdir -p "$D"
ln -s /etc "$W/out"
run write-join "$W" out/x aaaaaaaaaaaaaaaa "$SUM"
expect_rc 93 "a symlink out"
expect_no_file "$D" "the parts after a refusal"

# without openssl: sha256sum checks it (one ln per directory, not one per program)
mkdir -p "$T/nobin"
for d in /usr/bin /bin; do
    set --
    for f in "$d"/*; do
        [ "${f##*/}" = openssl ] || [ -e "$T/nobin/${f##*/}" ] || set -- "$@" "$f"
    done
    [ $# = 0 ] || ln -s "$@" "$T/nobin/"
done
mkdir -p "$D"
printf 'one two\n' >"$D/p000000"
rc=0
PATH="$T/nobin" "$SH" "$SCRIPTS/write-join.sh" "$W" plain.txt aaaaaaaaaaaaaaaa "$SUM" >"$T/out" 2>"$T/err" || rc=$?
expect_rc 0 "join with sha256sum"
[ "$(cat "$W/plain.txt")" = "one two" ] || fail "joined with sha256sum"
mkdir -p "$D"
printf 'changed\n' >"$D/p000000"
rc=0
PATH="$T/nobin" "$SH" "$SCRIPTS/write-join.sh" "$W" plain.txt aaaaaaaaaaaaaaaa "$SUM" >"$T/out" 2>"$T/err" || rc=$?
expect_rc 10 "a wrong SHA-256 with sha256sum"
