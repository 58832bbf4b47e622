#!/bin/sh
# A background job (docs/backend.md, "Background jobs"): the command under
# GNU timeout, its merged output in the state directory, then its end time
# and status (written last, by a rename).
#   $1  the command line (run by sh -c; the first argument, so that the
#       service's commands list shows what the user ran)
#   $2  the workspace root as this shell sees it
#   $3  the job id (checked by the caller)
#   $4  the cwd, relative to the root ("." for the root)
#   $5  the timeout, whole seconds
#   $6  the grace before KILL, seconds
# Exits with the command's status (124 for the timeout, 128 + N for a
# signal). The user's env is the command's only (as in exec.sh): the
# wrapper's programs run with their own PATH and locale, the command's shell
# gets the user's back. Its own variables are named ox_* (an environment
# variable of the user's that it assigned would reach the command changed).
set -u
# shellcheck source=lib-env.sh
. "${0%/*}/lib-env.sh"
ox_j="$2/.ocisbx/jobs/$3"
cd "$2/$4" || exit 3
timeout -v -s TERM -k "$6" "$5" sh -c "$ox_back
exec 2>&1
$1" >"$ox_j/out" 2>"$ox_j/tv" </dev/null
ox_s=$?
# timed out: timeout said it sent its signal (124 alone may be the command's)
ox_to=0
ox_l=
read -r ox_l <"$ox_j/tv" 2>/dev/null
case $ox_l in *"timeout: sending signal "*) ox_to=1 ;; esac
date +%s%3N >"$ox_j/end"
printf '%s %s\n' "$ox_s" "$ox_to" >"$ox_j/status.t"
mv -f "$ox_j/status.t" "$ox_j/status"
[ "$ox_to" = 1 ] && exit 124
exit "$ox_s"
