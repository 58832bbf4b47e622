#!/bin/sh
# A workspace path with its symlinks resolved as the workspace sees them:
# prints, as lowercase hex (byte exact whatever carries the output), the
# path below the workspace root that $2 leads to ("" for the root itself).
# Components that do not exist are kept as they are (realpath -m).
#   $1  the workspace root as this shell sees it
#   $2  a workspace-relative path without . or .. ("" for the root)
# Exits OCISBX_EXIT_OUTSIDE when the path leads outside the workspace.
set -u
# shellcheck source=lib.sh
. "${0%/*}/lib.sh"
W=$(realpath -- "$1") || exit 125
# the trailing "." keeps a name's final newlines through $(...)
r=$(realpath -m -- "$W/$2" && echo .) || exit 125
r=${r%??}
case "$r/" in
"$W"/*) ;;
*) exit "$OCISBX_EXIT_OUTSIDE" ;;
esac
r=${r#"$W"}
r=${r#/}
printf '%s' "$r" | od -An -tx1 -v | tr -d ' \n' || exit 125
