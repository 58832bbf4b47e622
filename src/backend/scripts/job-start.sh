#!/bin/sh
# Before a background job is spawned: its state directory, so that its
# status can be read as soon as job start returns.
#   $1  the workspace root as this shell sees it
#   $2  the job id (job-<16 letters or digits>, checked by the caller)
#   $3  the job's cwd, relative to the root ("." for the root)
# Exit 3: the cwd is not a directory; 125: the state cannot be written.
set -u
J="$1/.ocisbx/jobs/$2"
[ -d "$1/$3" ] || exit 3
mkdir -p "$J" || exit 125
date +%s%3N >"$J/start" || exit 125
: >"$J/out" || exit 125
