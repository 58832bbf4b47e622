#!/usr/bin/env bash
# cli_tests_one_runner: every test runs the ocisbx program through
# tests/support/cli_run.h: no other file of tests/ names the program's path
# (OCISBX_CLI_PATH) or forks it with a pty of its own (forkpty).
#   one_runner.sh SOURCE_DIR
set -euo pipefail
src=$1
bad=$(grep -rlE 'OCISBX_CLI_PATH|forkpty' "$src/tests" --include='*.c' --include='*.h' |
      grep -vE '/tests/support/cli_run\.[ch]$' || true)
if [ -n "$bad" ]; then
  echo "cli_tests_one_runner: these run the CLI without tests/support/cli_run.h:"; echo "$bad"; exit 1
fi
n=$(grep -lE '"cli_run\.h"' "$src"/tests/integration/it_cli_*.c | wc -l)
total=$(ls "$src"/tests/integration/it_cli_*.c | wc -l)
[ "$n" = "$total" ] || { echo "cli_tests_one_runner: $n of $total it_cli_ tests include cli_run.h"; exit 1; }
echo "cli_tests_one_runner: ok ($total CLI tests)"
