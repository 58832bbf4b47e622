#!/bin/sh
# sh -n and shellcheck -s sh on every workspace script of the folder $1;
# fails on any warning, and when shellcheck is missing (scripts/setup
# installs it).
set -u
dir=$1
fail=0
[ -n "${SHELLCHECK:-}" ] && [ -x "$SHELLCHECK" ] || { echo "lint: shellcheck is not installed (apt-get install shellcheck)"; exit 1; }
n=0
for f in "$dir"/*.sh; do
    n=$((n + 1))
    sh -n "$f" || { echo "lint: sh -n failed: $f"; fail=1; }
    (cd "$dir" && "$SHELLCHECK" -s sh -x "${f##*/}") || fail=1
done
[ "$n" -gt 0 ] || { echo "lint: no scripts in $dir"; exit 1; }
[ "$fail" = 0 ] && echo "lint: $n scripts clean"
exit "$fail"
