#!/bin/sh
# Removes a backend's exec run files (.ocisbx/run-<slot>.*): at its close,
# and after a canceled exec (they may hold its raw output).
#   $1  the workspace root as this shell sees it
#   $2  the slot (16 letters or digits)
set -u
find "$1/.ocisbx" -maxdepth 1 -name "run-$2.*" -delete 2>/dev/null
exit 0
