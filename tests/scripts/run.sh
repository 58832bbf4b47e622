#!/bin/sh
# run.sh SHELL TEST: runs one script test with SH=SHELL in a fresh T.
set -u
SH=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/ocisbx-sh.XXXXXX") || exit 1
export SH T SCRIPTS
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
sh "$2"
