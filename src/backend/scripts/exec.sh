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
# live head (the client has it all and measures it itself). The disk holds
# a bounded part of a longer output: split writes chunks of H - 4 bytes
# (through a path padded with slashes, so that its --verbose lines are
# ~680 bytes: its 64 KiB pipe to the reaper holds ~96); the reaper, a
# subshell that starts programs only once a second chunk exists, counts the
# lines (from the second on, a block of ~192 at a time), streams the
# complete chunks in order into one sha256sum and deletes them but the last
# few (the tail's); its pipe from split, when full, stops split, so at most
# some hundreds of chunks wait, however much the command prints. The count
# of chunks gives the exact total.
# The exit status is the command's (124 for the timeout, 128 + N for a
# signal); the trailer stays what the client reads.
# The user's env is the command's only: the variables that change how the
# wrapper's own programs run (PATH, the loader's, the locale, ...) are put
# aside, the wrapper runs with its own (PATH $OCISBX_TOOLS_PATH, or the
# system's directories; LC_ALL=C), and the command's shell gets them back
# before the command. Its own variables are named ox_* (an environment
# variable of the user's that it assigned would reach the command changed).
# Programs started for an output that fits the live head: timeout, sh,
# split and tail (printf is a builtin) (mkdir the first time, find when a stale slot is swept).
set -u
ox_cmd=$1 ox_w=$2 ox_cwd=$3 ox_secs=$4 ox_g=$5 ox_h=$6 ox_tt=$7 ox_n=$8 ox_k=$9 ox_now=${10}
# shellcheck source=lib-env.sh
. "${0%/*}/lib-env.sh"
ox_s=.ocisbx
ox_f="$ox_w/$ox_s/run-$ox_k"
ox_h4=$((ox_h - 4))
# 600 slashes in split's path to the chunks: its --verbose lines are long
# (the disk bound, below), the chunks' names short
ox_pad=//////////
ox_pad=$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad
ox_pad=$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad$ox_pad

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
# Output files of a slot without a busy file (a client killed while its
# files went, an older wrapper's chunks): gone when a minute old.
for ox_b in "$ox_w/$ox_s"/run-*.o.*; do
    [ -e "$ox_b" ] || continue
    ox_b=${ox_b##*/}
    ox_b=${ox_b%%.*}
    [ -e "$ox_w/$ox_s/$ox_b.busy" ] ||
        find "$ox_w/$ox_s" -maxdepth 1 -name "$ox_b.*" -mmin +1 -delete 2>/dev/null
done
# A run of this slot that was cut off left its files: start clean.
[ -e "$ox_f.o.ab" ] && find "$ox_w/$ox_s" -maxdepth 1 -name "run-$ox_k.o.*" -delete 2>/dev/null

# the chunks: run-<slot>.o.<aa, ab, ...>
ox_a="$ox_f.o.aa"
# chunks the reaper keeps for the tail (all but the last are full)
ox_kk=$(((ox_tt + ox_h4 - 1) / ox_h4 + 1))
printf 'R %s\n' $((ox_now + ox_secs + ox_g)) >"$ox_f.busy" || exit 125
: >"$ox_a" && : >"$ox_f.tv" && : >"$ox_f.st" && : >"$ox_f.nc" || exit 125

# ox_reap RUNNING: the complete chunks not hashed yet go to the digest, in
# order; the hashed ones but the last ox_kk are deleted. Chunk n (from 1)
# is the one at place n - ox_gone of a sorted listing that holds every
# chunk up to n. A listing holds every chunk that existed when it began,
# but one that split began meanwhile may be in it or not, even after a
# newer one (ext4 returns a large directory's entries in hash order). So
# while split runs (RUNNING 1), the newest chunk of a first listing, Z, is
# looked for in a second: split began every older chunk before Z, so the
# second holds them all, before Z; those are complete (split closes a
# chunk before it begins the next), Z may not be.
ox_hashing=0 ox_done=0 ox_gone=0 ox_z=
# ox_words FROM TO: ox_r, the words "${FROM}" .. "${TO}", for an eval that
# gives a command those positional parameters (set -- "$@" X, once per
# chunk, took a copy of them all each time: ~2 ms a reap in dash)
ox_words() {
    ox_r='' ox_w1=$1
    while [ "$ox_w1" -le "$2" ]; do
        ox_r="$ox_r \"\${$ox_w1}\""
        ox_w1=$((ox_w1 + 1))
    done
}
ox_reap() {
    ox_run=$1
    set -- "$ox_f".o.*
    if [ "$ox_run" = 1 ]; then
        eval "ox_z=\${$#}"
        set -- "$ox_f".o.*
        ox_m=$ox_gone
        for ox_c in "$@"; do
            [ "$ox_c" = "$ox_z" ] && break
            ox_m=$((ox_m + 1))
        done
    else
        ox_m=$((ox_gone + $#))
    fi
    [ "$ox_m" -gt "$ox_done" ] || return 0
    if [ "$ox_hashing" = 0 ]; then
        head -c 5 -- "$2" >"$ox_f.h5" || exit 125
        rm -f -- "$ox_f.hp"
        mkfifo -- "$ox_f.hp" || exit 125
        sha256sum <"$ox_f.hp" >"$ox_f.sum" &
        ox_sp=$!
        exec 5>"$ox_f.hp"
        ox_hashing=1
    fi
    ox_words $((ox_done - ox_gone + 1)) $((ox_m - ox_gone))
    eval "cat -- $ox_r" >&5 || exit 125
    ox_done=$ox_m
    set -- "$ox_f".o.*
    ox_j=$((ox_m - ox_kk - ox_gone))
    [ "$ox_j" -gt $# ] && ox_j=$#
    if [ "$ox_j" -gt 0 ]; then
        ox_words 1 "$ox_j"
        eval "rm -f -- $ox_r"
        ox_gone=$((ox_gone + ox_j))
    fi
    return 0
}
{
    timeout -v -s TERM -k "$ox_g" "$ox_secs" sh -c "$ox_back
exec 2>&1
$ox_cmd" </dev/null 2>"$ox_f.tv" &
    ox_p=$!
    wait "$ox_p"
    echo "$?" >"$ox_f.st"
    # what the command left running in its process group ends with it
    kill -s KILL -- "-$ox_p" 2>/dev/null
} | split --verbose -b "$ox_h4" - "$ox_w/$ox_s$ox_pad/run-$ox_k.o." 2>/dev/null | {
    # one line per chunk begun; nothing but builtins while there is one.
    # From the second on (read takes a byte per read(2) on a pipe, some 680
    # per line), blocks of ox_bl bytes, ~192 lines (head -c reads no more),
    # their newlines counted; a reap after each. At most ~300 chunks wait:
    # a block's, the pipe's and split's buffer's (4 KiB).
    ox_i=0
    while [ "$ox_i" -lt 2 ] && IFS= read -r ox_l; do ox_i=$((ox_i + 1)); done
    ox_bl=$((192 * (${#ox_f} + 624)))
    while [ "$ox_i" -ge 2 ]; do
        # shellcheck disable=SC2046 # its lines and bytes, two words
        set -- $(head -c "$ox_bl" | wc -lc)
        [ "${2:-0}" = 0 ] && break
        ox_i=$((ox_i + $1))
        ox_reap 1
    done
    if [ "$ox_i" -ge 2 ]; then
        ox_reap 0
        exec 5>&-
        wait "$ox_sp"
        echo "$ox_i" >"$ox_f.nc"
    fi
} &
ox_q=$!
# polling every 2 ms (GNU tail's ---disable-inotify, there since coreutils
# 7.5): with inotify, tail notices the end of split some 10 ms later
tail ---disable-inotify -s 0.002 -c +1 -f --pid="$ox_q" "$ox_a" 2>/dev/null
wait "$ox_q"
ox_st=-
read -r ox_st <"$ox_f.st" 2>/dev/null
# timed out: timeout said it sent its signal (its -v line; an exit status
# of 124 alone may be the command's own)
ox_to=0
ox_l=
read -r ox_l <"$ox_f.tv" 2>/dev/null
case $ox_l in *"timeout: sending signal "*) ox_to=1 ;; esac
: >"$ox_f.tv"
ox_x=$ox_st
[ "$ox_to" = 1 ] && ox_x=124
case $ox_x in '' | *[!0-9]*) ox_x=125 ;; esac

ox_nc=
read -r ox_nc <"$ox_f.nc" 2>/dev/null
if [ -z "$ox_nc" ]; then
    : >"$ox_a"
    printf 'I %s\n' "$ox_now" >"$ox_f.busy"
    printf '\nOCISBX-END %s %s %s - - - -\n' "$ox_n" "$ox_st" "$ox_to" >&2
    exit "$ox_x"
fi

# More than the live head: ox_nc chunks of H - 4 bytes but the last; the
# last ox_kk of them are still there.
set -- "$ox_f".o.*
ox_last=
eval "ox_last=\${$#}"
ox_t=$(wc -c <"$ox_last")
ox_t=$((ox_h4 * (ox_nc - 1) + ox_t))
ox_sum=
read -r ox_sum _ <"$ox_f.sum"
[ ${#ox_sum} = 64 ] || exit 125
if [ "$ox_t" -le "$ox_h" ]; then
    cat "$ox_f.h5"
    ox_hl=$ox_t
    ox_tl=0
else
    # the head ends before the last character start among bytes H-4..H
    ox_hl=$ox_h
    ox_j=$ox_h4
    for ox_v in $(od -An -v -tu1 "$ox_f.h5"); do
        if [ "$ox_v" -lt 128 ] || [ "$ox_v" -ge 192 ]; then ox_hl=$ox_j; fi
        ox_j=$((ox_j + 1))
    done
    head -c $((ox_hl - ox_h4)) "$ox_f.h5"
    ox_tl=$((ox_t - ox_hl))
    [ "$ox_tl" -gt "$ox_tt" ] && ox_tl=$ox_tt
    cat -- "$@" | tail -c "$ox_tl" >"$ox_f.t"
    # the tail starts after the continuation bytes it begins with
    for ox_v in $(head -c 4 "$ox_f.t" | od -An -v -tu1); do
        if [ "$ox_v" -ge 128 ] && [ "$ox_v" -lt 192 ]; then ox_tl=$((ox_tl - 1)); else break; fi
    done
    tail -c "$ox_tl" "$ox_f.t" >&2
fi
find "$ox_w/$ox_s" -maxdepth 1 \( -name "run-$ox_k.o.*" -o -name "run-$ox_k.t" -o -name "run-$ox_k.h?" \
    -o -name "run-$ox_k.sum" \) -delete 2>/dev/null
: >"$ox_a"
: >"$ox_f.nc"
printf 'I %s\n' "$ox_now" >"$ox_f.busy"
printf '\nOCISBX-END %s %s %s %s %s %s %s\n' "$ox_n" "$ox_st" "$ox_to" "$ox_hl" "$ox_tl" "$ox_t" "$ox_sum" >&2
exit "$ox_x"
