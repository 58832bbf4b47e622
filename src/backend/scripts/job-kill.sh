#!/bin/sh
# After the job's process tree was ended: a job that had not written its exit
# status is marked killed, with its end time.
#   $1  the workspace root as this shell sees it
#   $2  the job id (job-<16 letters or digits>, checked by the caller)
set -u
J="$1/.ocisbx/jobs/$2"
[ -f "$J/status" ] && exit 0
date +%s%3N >"$J/end" || exit 125
: >"$J/killed" || exit 125
