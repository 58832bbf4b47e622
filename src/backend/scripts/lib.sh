#!/bin/sh
# Functions every workspace script shares (inlined into each at build time:
# cmake/EmbedScripts.cmake). $W is the workspace root as the script sees it.

# The exit status of a path that leads outside the workspace through a
# symlink (the backend turns it into OCISBX_EFORBIDDEN); backend_int.h has
# the same number.
OCISBX_EXIT_OUTSIDE=93
# The exit status of a script one of whose steps failed: the last line of
# its stderr names the step and says why (the backend turns it into an
# error with that line: OCISBX_SCRIPT_EXIT_STEP in backend_int.h).
OCISBX_EXIT_STEP=94

# confine PATH: exits OCISBX_EXIT_OUTSIDE unless PATH, its symlinks followed
# as the workspace sees them, stays inside $W.
confine() {
    case "$(realpath -m -- "$1" 2>/dev/null)/" in
    "$W"/*) ;;
    *) exit "$OCISBX_EXIT_OUTSIDE" ;;
    esac
}

# fail STEP [WHY]: ends the script with OCISBX_EXIT_STEP and
# "STEP failed[: WHY]" as the last line of stderr.
fail() {
    printf '%s failed%s\n' "$1" "${2:+: $2}" >&2
    exit "$OCISBX_EXIT_STEP"
}

# first_line FILE: the first line of FILE (at most 300 bytes), for fail.
first_line() {
    head -n 1 -- "$1" 2>/dev/null | head -c 300
}

# use_tmp NAME: $T, a fresh directory under $W/.ocisbx/tmp, is also TMPDIR
# (sort and the like need space; /tmp may be read-only) and is removed when
# the script ends. Directories there older than ten minutes (of scripts
# that were killed) go first.
use_tmp() {
    find "$W/.ocisbx/tmp" -mindepth 1 -maxdepth 1 -mmin +10 -exec rm -rf {} + 2>/dev/null
    T="$W/.ocisbx/tmp/$1.$$"
    rm -rf -- "$T"
    mkdir -p -- "$T" || fail "making $T"
    TMPDIR=$T
    export TMPDIR
    trap 'rm -rf -- "$T"' EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# capture: when the backend asked for it ($OCISBX_CAPTURE, a name under
# $W/.ocisbx), stdout goes to that file, which the backend reads back byte
# exact (the service's output is text). Run directly, stdout stays.
capture() {
    [ -n "${OCISBX_CAPTURE:-}" ] || return 0
    mkdir -p -- "$W/.ocisbx" || fail "making $W/.ocisbx"
    printf '' >"$W/.ocisbx/$OCISBX_CAPTURE" || fail "creating the capture file"
    exec >"$W/.ocisbx/$OCISBX_CAPTURE"
}

# enter_dir DIR: after the confinement check (and capture), the shell is
# in $W and DIR (relative to it: "." or "./<path>") is a directory; exits 3
# when nothing is there, 20 when it is not a directory.
enter_dir() {
    confine "$W/$1"
    capture
    cd "$W" || fail "cd to the workspace"
    if [ ! -d "$1" ]; then
        [ -e "$1" ] && exit 20
        exit 3
    fi
}

# find_sorted OUT FIND-ARGUMENTS...: what find prints (NUL-terminated
# records) into OUT in byte order; a failing find or sort fail()s. Needs $T.
find_sorted() {
    _out=$1
    shift
    find "$@" >"$T/found" 2>"$T/err" || fail "find" "$(first_line "$T/err")"
    LC_ALL=C sort -z -- "$T/found" >"$_out" 2>"$T/err" || fail "sort" "$(first_line "$T/err")"
}

# page SKIP COUNT: NUL-terminated fields SKIP+1 .. SKIP+COUNT of stdin (a
# tail that fails other than by the closed pipe is noted in $T/failed).
page() {
    { tail -z -n "+$(($1 + 1))" || [ $? -ge 128 ] || echo tail >>"$T/failed"; } | head -z -n "$2"
}

# sha256: the lowercase hex SHA-256 of stdin, then a space and more:
# openssl's (several times faster where the CPU has SHA instructions) when
# there is one, else sha256sum's.
sha256() {
    if command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 -r
    else
        sha256sum
    fi
}
