#!/bin/sh
# The exec wrapper (docs/backend.md, "The exec wrapper"): runs one command
# under GNU timeout, its stdout and stderr merged into one file, streams the
# head live on stdout, and ends with a trailer as the last line of stderr.
#   $1  the command line (run by sh -c; the first argument, so that the
#       service's commands list shows what the user ran)
#   $2  the workspace root as this shell sees it
#   $3  the cwd, relative to the root ("." for the root)
#   $4  the timeout, whole seconds        $5  the grace before KILL, seconds
#   $6  H: the head budget (bytes)         $7  TT: the tail budget (bytes)
#   $8  the run's id (in the trailer)      $9  the slot: run files
#       .ocisbx/run-<slot>.*, reused by the backend's next exec
#   $10 the client's clock, epoch seconds (for the stale-slot sweep)
# stdout: the first H - 4 bytes as they are written (split caps the file
# that tail follows); when there is more, up to 4 more bytes to end the head
# on a UTF-8 boundary. stderr: when the output is cut, the tail (at most TT
# bytes, starting on a UTF-8 boundary); then the trailer
#   \nOCISBX-END <id> <status> <timed out 0|1> <HL> <TL> <total> <sha256>\n
# where HL, TL, total and sha256 are "-" when all the output fits in the
# live head (the client has it all and measures it itself).
# Its own variables are named ox_* (an environment variable of the user's
# that it assigned would reach the command changed).
# Programs started for an output that fits the live head: timeout, sh,
# split and tail (mkdir the first time, find when a stale slot is swept).
set -u
ox_cmd=$1 ox_w=$2 ox_cwd=$3 ox_secs=$4 ox_g=$5 ox_h=$6 ox_tt=$7 ox_n=$8 ox_k=$9 ox_now=${10}
ox_s=.ocisbx
ox_f="$ox_w/$ox_s/run-$ox_k"
ox_h4=$((ox_h - 4))

cd "$ox_w/$ox_cwd" 2>/dev/null || {
    printf '\nOCISBX-NOCWD %s\n' "$ox_n" >&2
    exit 0
}
[ -d "$ox_w/$ox_s" ] || mkdir -p "$ox_w/$ox_s" 2>/dev/null || exit 125

# Slots of other backends: "R <deadline>" while a run is on, "I <time>" when
# idle; past it by a minute, the slot's files go (an idle slot's are empty,
# a dead run's hold its raw output).
for ox_b in "$ox_w/$ox_s"/run-*.busy; do
    if [ ! -f "$ox_b" ] || [ "$ox_b" = "$ox_f.busy" ]; then continue; fi
    ox_b=${ox_b##*/}
    ox_b=${ox_b%.busy}
    case ${ox_b#run-} in '' | *[!A-Za-z0-9]*) continue ;; esac
    ox_t=0
    read -r _ ox_t <"$ox_w/$ox_s/$ox_b.busy" 2>/dev/null || :
    case $ox_t in '' | *[!0-9]*) ox_t=0 ;; esac
    [ "$ox_now" -gt $((ox_t + 60)) ] && find "$ox_w/$ox_s" -maxdepth 1 -name "$ox_b.*" -delete 2>/dev/null
done
# A run of this slot that was cut off left its chunks: start clean.
[ -e "$ox_f.o.ab" ] && find "$ox_w/$ox_s" -maxdepth 1 -name "run-$ox_k.o.*" -delete 2>/dev/null

printf 'R %s\n' $((ox_now + ox_secs + ox_g)) >"$ox_f.busy" || exit 125
: >"$ox_f.o.aa" && : >"$ox_f.tv" && : >"$ox_f.st" || exit 125
{
    timeout -v -s TERM -k "$ox_g" "$ox_secs" sh -c "exec 2>&1
$ox_cmd" </dev/null 2>"$ox_f.tv" &
    ox_p=$!
    wait "$ox_p"
    echo "$?" >"$ox_f.st"
    # what the command left running in its process group ends with it
    kill -s KILL -- "-$ox_p" 2>/dev/null
} | split -b "$ox_h4" - "$ox_f.o." 2>/dev/null &
ox_q=$!
# polling every 2 ms (GNU tail's ---disable-inotify, there since coreutils
# 7.5): with inotify, tail notices the end of split some 10 ms later
tail ---disable-inotify -s 0.002 -c +1 -f --pid="$ox_q" "$ox_f.o.aa" 2>/dev/null
wait "$ox_q"
ox_st=-
read -r ox_st <"$ox_f.st" 2>/dev/null
ox_to=0
[ -s "$ox_f.tv" ] && ox_to=1
: >"$ox_f.tv"

if [ ! -e "$ox_f.o.ab" ]; then
    : >"$ox_f.o.aa"
    printf 'I %s\n' "$ox_now" >"$ox_f.busy"
    printf '\nOCISBX-END %s %s %s - - - -\n' "$ox_n" "$ox_st" "$ox_to" >&2
    exit 0
fi

# More than the live head: the chunks of H - 4 bytes each, in order.
set -- "$ox_f".o.*
ox_nc=$#
ox_last=
eval "ox_last=\${$ox_nc}"
ox_t=$(wc -c <"$ox_last")
ox_t=$((ox_h4 * (ox_nc - 1) + ox_t))
ox_sum=$(printf '%s\0' "$@" | xargs -0 cat | sha256sum)
ox_sum=${ox_sum%% *}
if [ "$ox_t" -le "$ox_h" ]; then
    cat "$ox_f.o.ab"
    ox_hl=$ox_t
    ox_tl=0
else
    # the head ends before the last character start among bytes H-4..H
    ox_hl=$ox_h
    ox_j=$ox_h4
    for ox_v in $(head -c 5 "$ox_f.o.ab" | od -An -v -tu1); do
        if [ "$ox_v" -lt 128 ] || [ "$ox_v" -ge 192 ]; then ox_hl=$ox_j; fi
        ox_j=$((ox_j + 1))
    done
    head -c $((ox_hl - ox_h4)) "$ox_f.o.ab"
    ox_tl=$((ox_t - ox_hl))
    [ "$ox_tl" -gt "$ox_tt" ] && ox_tl=$ox_tt
    shift $(((ox_t - ox_tl) / ox_h4))
    cat "$@" | tail -c "$ox_tl" >"$ox_f.t"
    # the tail starts after the continuation bytes it begins with
    for ox_v in $(head -c 4 "$ox_f.t" | od -An -v -tu1); do
        if [ "$ox_v" -ge 128 ] && [ "$ox_v" -lt 192 ]; then ox_tl=$((ox_tl - 1)); else break; fi
    done
    tail -c "$ox_tl" "$ox_f.t" >&2
fi
find "$ox_w/$ox_s" -maxdepth 1 \( -name "run-$ox_k.o.*" -o -name "run-$ox_k.t" \) -delete 2>/dev/null
printf 'I %s\n' "$ox_now" >"$ox_f.busy"
printf '\nOCISBX-END %s %s %s %s %s %s %s\n' "$ox_n" "$ox_st" "$ox_to" "$ox_hl" "$ox_tl" "$ox_t" "$ox_sum" >&2
