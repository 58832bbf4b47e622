#!/usr/bin/env bash
# run-with-tenancy.sh BUILD_DIR PROGRAM [ARGS...]: runs PROGRAM against a fresh
# local test tenancy (scripts/local-tenancy: a throwaway key, CA and config file, over https)
# with its environment exported, and stops the tenancy afterwards, whatever
# happens. PROGRAM's exit status is this script's.
#   TENANCY_EXTRA_YAML   a file of tenancy.yaml keys (e.g. `faults:`) added to
#                        the tenancy's file before the emulator starts
set -euo pipefail
build=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "$build/tenancy.XXXXXX")
trap 'BUILD_DIR=$build "$root/scripts/local-tenancy" stop "$dir"; rm -rf "$dir"' EXIT
BUILD_DIR=$build "$root/scripts/local-tenancy" start "$dir" >/dev/null
if [ -n "${TENANCY_EXTRA_YAML:-}" ]; then
  # local-tenancy writes the file on the first start only: stop, add, start again
  BUILD_DIR=$build "$root/scripts/local-tenancy" stop "$dir"
  cat "$TENANCY_EXTRA_YAML" >> "$dir/tenancy.yaml"
  BUILD_DIR=$build "$root/scripts/local-tenancy" start "$dir" >/dev/null
fi
# shellcheck disable=SC1091
source "$dir/env"
"$@"
