#!/usr/bin/env bash
# doc_shell_blocks: the shell blocks a new user types, run as written. In
# README.md, docs/getting-started.md and docs/building.md a block is marked
# by the line before its fence:
#
#   <!-- shell: NAME -->
#   ```sh
#   ...
#   ```
#
# Each marked block runs in bash (errexit, pipefail) in a fresh directory
# (the blocks at once, each reported whole in the files' order),
# with a fresh HOME and none of the caller's OCI_* variables (a tenancy's
# keys come from the build's key pool: OCISBX_TENANCY_KEY_DIR), after these
# replacements only: scripts/ -> the source tree's scripts/, build/ -> this
# build directory, /tmp/t -> a fresh directory. A block that starts a local
# test tenancy stops it itself (the test stops it too, on failure).
#   shell_blocks.sh SOURCE_DIR BUILD_DIR [FILE...]
set -euo pipefail
src=$1 build=$2
shift 2
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$src/README.md" "$src/docs/getting-started.md" "$src/docs/building.md")
work=$(mktemp -d)
: >"$work/order" # the blocks, in the files' order
cleanup() {
  for d in "$work"/*/t "$work"/*/tenancy; do
    [ -f "$d/emulator.pid" ] && "$src/scripts/local-tenancy" stop "$d" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
blocks=0 failed=0
for md in "${files[@]}"; do
  names=$(sed -n 's/^<!-- shell: \([A-Za-z0-9_-]*\) -->$/\1/p' "$md")
  for name in $names; do
    dir=$work/$name
    mkdir -p "$dir/home"
    # the block after the marker, up to its closing fence
    awk -v tag="<!-- shell: $name -->" '$0 == tag {on = 1; next}
        on == 1 { if ($0 != "```sh") { print "MARKER_NOT_BEFORE_A_SH_FENCE"; exit } on = 2; next }
        on == 2 && /^```/ {exit}
        on == 2' "$md" > "$dir/block.sh"
    if grep -qx MARKER_NOT_BEFORE_A_SH_FENCE "$dir/block.sh" || [ ! -s "$dir/block.sh" ]; then
      echo "FAIL $md: <!-- shell: $name --> is not right before a \`\`\`sh block"; failed=$((failed + 1)); continue
    fi
    sed -i -e "s#\\(^\\|[^A-Za-z0-9_./-]\\)scripts/#\\1$src/scripts/#g" \
           -e "s#\\(^\\|[^A-Za-z0-9_./-]\\)build/#\\1$build/#g" \
           -e "s#/tmp/t\\b#$dir/t#g" "$dir/block.sh"
    blocks=$((blocks + 1))
    # each block runs beside the others (each has its own directory and
    # tenancy); its report is printed below, in the files' order
    (st=0
     cd "$dir" && env -i PATH="$PATH" HOME="$dir/home" LANG=C.UTF-8 TERM=dumb BUILD_DIR="$build" \
       OCISBX_TENANCY_KEY_DIR="$build/test-key-pool/tenancy" \
       bash -euo pipefail "$dir/block.sh" </dev/null >"$dir/out" 2>&1 || st=$?
     echo "$st" >"$dir/status") &
    printf '%s %s\n' "$(basename "$md")" "$name" >>"$work/order"
  done
done
wait
while read -r md name; do
  dir=$work/$name
  echo "== $md: $name"
  sed 's/^/   | /' "$dir/block.sh"
  st=$(cat "$dir/status" 2>/dev/null || echo none)
  if [ "$st" = 0 ]; then
    echo "   ok"
  else
    echo "FAIL $md: the block $name exited $st:"; sed 's/^/   > /' "$dir/out"; failed=$((failed + 1))
  fi
done <"$work/order"
[ "$blocks" -ge 3 ] || { echo "FAIL: only $blocks marked shell blocks"; failed=$((failed + 1)); }
if [ "$failed" -gt 0 ]; then echo "doc_shell_blocks: $failed of $blocks failed"; exit 1; fi
echo "doc_shell_blocks: $blocks blocks ok"
