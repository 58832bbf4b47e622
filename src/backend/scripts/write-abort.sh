#!/bin/sh
# Removes the parts of a chunked write that was canceled or failed:
# $1/.ocisbx/write-$2. A part whose body had all been sent when the client
# gave up may still be written by the service after that, so the directory
# is watched (100 ms steps) until it has stayed away for 500 ms, removed
# again each time it came back; 3 s at most.
#   $1  the workspace root as this shell sees it
#   $2  the write's id (16 characters [0-9a-z], made by the caller)
set -u
D="$1/.ocisbx/write-$2"
rm -rf -- "$D"
QUIET=0
N=30
while [ "$QUIET" -lt 5 ] && [ "$N" -gt 0 ]; do
    sleep 0.1
    if [ -e "$D" ]; then
        rm -rf -- "$D"
        QUIET=0
    else
        QUIET=$((QUIET + 1))
    fi
    N=$((N - 1))
done
exit 0
