#!/bin/sh
# A window of a job's merged output, copied to a file beside it for a byte
# exact read; prints the output's size so far.
#   $1  the workspace root as this shell sees it
#   $2  the job id (checked by the caller)
#   $3  the byte offset (-1: the last $4 bytes)
#   $4  the most bytes to copy
#   $5  the window's file name in the state directory (w-<random>); an
#       earlier call's windows are removed
#   $6  1: also print the SHA-256 of the whole output after its size
# Exit 3: no such job; 125: the window cannot be written.
set -u
J="$1/.ocisbx/jobs/$2"
[ -f "$J/out" ] || exit 3
for X in "$J"/w-*; do
    [ -e "$X" ] && rm -f "$X"
done
B=$(wc -c <"$J/out")
B=$((B + 0))
O=$3
if [ "$O" -lt 0 ]; then
    O=0
    [ "$B" -gt "$4" ] && O=$((B - $4))
fi
tail -c +$((O + 1)) "$J/out" | head -c "$4" >"$J/$5" || exit 125
if [ "$6" = 1 ]; then
    SUM=$(sha256sum <"$J/out") || exit 125
    printf '%s %s\n' "$B" "${SUM%% *}"
else
    printf '%s\n' "$B"
fi
