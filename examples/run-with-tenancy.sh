#!/usr/bin/env bash
# run-with-tenancy.sh BUILD_DIR PROGRAM [ARGS...]: runs PROGRAM against a fresh
# local test tenancy (scripts/local-tenancy: a throwaway config file, keys and CA, over https)
# with its environment exported, and stops the tenancy afterwards, whatever
# happens. PROGRAM's exit status is this script's.
#   TENANCY_EXTRA_YAML   a file of tenancy.yaml keys (e.g. `faults:`) added to
#                        the tenancy's file before the emulator starts
# The tests' tenancy differs from a quick start's in two things only: its
# keys come from BUILD_DIR/test-key-pool/tenancy (made by the first run, then
# copied: OCISBX_TENANCY_KEY_DIR), and a create takes 50 ms to be RUNNING, a
# stop 20 ms to be STOPPED (the emulator's defaults: 300 ms and 100 ms).
set -euo pipefail
build=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "$build/tenancy.XXXXXX")
trap 'BUILD_DIR=$build "$root/scripts/local-tenancy" stop "$dir"; rm -rf "$dir"' EXIT
printf 'limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n' > "$dir/extra.yaml"
if [ -n "${TENANCY_EXTRA_YAML:-}" ]; then cat "$TENANCY_EXTRA_YAML" >> "$dir/extra.yaml"; fi
export OCISBX_TENANCY_KEY_DIR=${OCISBX_TENANCY_KEY_DIR:-$build/test-key-pool/tenancy}
BUILD_DIR=$build OCISBX_TENANCY_EXTRA_YAML=$dir/extra.yaml "$root/scripts/local-tenancy" start "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
"$@"
