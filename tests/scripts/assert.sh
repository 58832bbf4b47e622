#!/bin/sh
# Helpers for tests/scripts/test_*.sh (sourced): run a workspace script
# under $SH and check what it did. Every failure names the check and exits 1.
set -u

# run NAME ARGS...: runs $SCRIPTS/NAME.sh under $SH; stdout in $T/out,
# stderr in $T/err, the exit status in $rc.
run() {
    _name=$1
    shift
    rc=0
    "$SH" "$SCRIPTS/$_name.sh" "$@" >"$T/out" 2>"$T/err" || rc=$?
}

fail() {
    echo "FAIL: $*" >&2
    echo "--- stdout" >&2
    cat "$T/out" >&2 2>/dev/null
    echo "--- stderr" >&2
    cat "$T/err" >&2 2>/dev/null
    exit 1
}

# expect_rc N WHAT
expect_rc() {
    [ "$rc" = "$1" ] || fail "$2: exit status $rc, expected $1"
}

# expect_out TEXT WHAT: stdout is exactly TEXT (printf %s, no newline added)
expect_out() {
    printf '%s' "$1" >"$T/expected"
    cmp -s "$T/expected" "$T/out" || fail "$2: stdout differs from '$1'"
}

# expect_file PATH WHAT / expect_no_file PATH WHAT
expect_file() { [ -e "$1" ] || fail "$2: $1 missing"; }
expect_no_file() { [ ! -e "$1" ] && [ ! -L "$1" ] || fail "$2: $1 exists"; }
