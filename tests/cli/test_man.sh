#!/usr/bin/env bash
# man_pages: ocisbx(1), made from the command table, rendered by `man -l`
# as a user reads it: its sections, each command and subcommand in its own
# section with every option of the table (taken from the generated bash
# completion data, the same table); no groff warnings. ocisbx-emulator(1)
# and ocisbx-local-tenancy(1) render too, and the emulator's page names
# every option its --help shows.
#   test_man.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
render() { MANWIDTH=120 man -P cat -l "$1" 2>"$tmp/warn"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for page in "$build/share/ocisbx.1" "$src/docs/man/ocisbx-emulator.1" "$src/docs/man/ocisbx-local-tenancy.1"; do
  render "$page" > "$tmp/page.txt" || fail "man -l $page"
  [ -s "$tmp/page.txt" ] || fail "man -l $page: nothing"
  [ ! -s "$tmp/warn" ] || fail "man -l $page: $(cat "$tmp/warn")"
  w=$(groff -man -ww -z "$page" 2>&1) || true
  [ -z "$w" ] || fail "groff warnings in $page: $w"
  for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do grep -q "^$s" "$tmp/page.txt" || fail "$page: no section $s"; done
done

render "$build/share/ocisbx.1" > "$tmp/ocisbx.txt"
for s in "GLOBAL OPTIONS" COMMANDS ALIASES ENVIRONMENT "EXIT STATUS"; do
  grep -q "^$s" "$tmp/ocisbx.txt" || fail "ocisbx(1): no section $s"
done
# each subcommand's section: "   ocisbx PATH" up to the next one
section() { awk -v h="   ocisbx $1" '$0 == h {on = 1; next} on && (/^   ocisbx / || /^[A-Z]/) {exit} on' "$tmp/ocisbx.txt"; }
bash_data=$build/share/ocisbx.bash
aliases=" $("$build/ocisbx" --help | awk '$2 ~ /^alias/ {printf "%s ", $1}')"
verbs_of() { bash -c 'source "$1"; _ocisbx_verbs "$2"' _ "$bash_data" "$1"; }
sections=0
while IFS= read -r line; do
  path=$(sed -n "s/^    '\([^']*\)') echo '\([^']*\)' ;;$/\1/p" <<<"$line")
  opts=$(sed -n "s/^    '\([^']*\)') echo '\([^']*\)' ;;$/\2/p" <<<"$line")
  [ -n "$path" ] || continue
  group=${path%% *} verb=${path#* }
  case "$aliases" in *" $group "*) continue ;; esac           # this CLI's first names: ALIASES
  if [ "$verb" != "$path" ]; then
    case " $(verbs_of "$group") " in *" $verb "*) ;; *) continue ;; esac   # a hidden name
  fi
  body=$(section "$path")
  [ -n "$body" ] || { fail "ocisbx(1): no section for ocisbx $path"; continue; }
  sections=$((sections + 1))
  for o in $opts; do
    grep -qE "^       $o( |$)" <<<"$body" || fail "ocisbx(1), ocisbx $path: $o is not described"
  done
done < <(sed -n '/^_ocisbx_opts() {/,/^}/p' "$bash_data")
[ "$sections" -ge 35 ] || fail "ocisbx(1): only $sections command sections"
# the global options and the variables
for o in --config-file --profile --auth --region --endpoint --ca-bundle --no-retry --debug --max-retries; do
  grep -qE "^       $o( |$)" "$tmp/ocisbx.txt" || fail "ocisbx(1): global option $o"
done
for v in OCI_CONFIG_FILE OCI_SANDBOX_PROFILE OCI_SANDBOX_ENDPOINT OCI_SANDBOX_PROJECT_ID; do
  grep -q "^       $v" "$tmp/ocisbx.txt" || fail "ocisbx(1): no variable $v"
done
grep -q "generative-ai-sandbox" "$tmp/ocisbx.txt" || fail "ocisbx(1): the OCI CLI's path"

# ocisbx-emulator(1): every option of its --help
render "$src/docs/man/ocisbx-emulator.1" > "$tmp/emu.txt"
for o in $("$build/ocisbx-emulator" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
  grep -qE -- "(^| )$o( |,|$)" "$tmp/emu.txt" || fail "ocisbx-emulator(1): $o (in its --help) is not described"
done

if [ "$fails" -gt 0 ]; then echo "man_pages: $fails failed"; exit 1; fi
echo "man_pages: ok ($sections command sections)"
