#!/usr/bin/env bash
# run-with-tenancy.sh BUILD_DIR PROGRAM [ARGS...]: runs PROGRAM against a fresh
# local test tenancy and stops the tenancy afterwards, whatever happens.
set -euo pipefail
build=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "$build/tenancy.XXXXXX")
trap 'BUILD_DIR=$build "$root/scripts/local-tenancy" stop "$dir"; rm -rf "$dir"' EXIT
BUILD_DIR=$build "$root/scripts/local-tenancy" start "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
"$@"
