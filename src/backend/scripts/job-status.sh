#!/bin/sh
# A job's state, after waiting (in 100 ms steps) at most $3 ms for it to end:
#   JOB <running 0|1> <exit status|-> <timed out 0|1> <killed 0|1> <duration ms> <output bytes>
#   $1  the workspace root as this shell sees it
#   $2  the job id (checked by the caller)
#   $3  how long to wait for the end, ms (0: not at all)
# Exit 3: no such job.
set -u
J="$1/.ocisbx/jobs/$2"
[ -f "$J/start" ] || exit 3
N=$((($3 + 99) / 100))
while [ "$N" -gt 0 ] && [ ! -f "$J/status" ] && [ ! -f "$J/killed" ]; do
    sleep 0.1
    N=$((N - 1))
done
NOW=$(date +%s%3N)
read -r ST <"$J/start"
if [ -f "$J/status" ]; then
    read -r S TO <"$J/status"
    read -r E <"$J/end"
    R=0
    K=0
elif [ -f "$J/killed" ]; then
    S=-
    TO=0
    R=0
    K=1
    E=$NOW
    [ -f "$J/end" ] && read -r E <"$J/end"
else
    S=-
    TO=0
    R=1
    K=0
    E=$NOW
fi
B=$(wc -c <"$J/out")
printf 'JOB %s %s %s %s %s %s\n' "$R" "$S" "$TO" "$K" $((E - ST)) $((B + 0))
