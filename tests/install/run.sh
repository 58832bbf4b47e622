#!/usr/bin/env bash
# install_consumer: installs the build into a temporary prefix and uses it as
# a user of the package would, from the prefix alone: the files are there
# (library, headers, CMake and pkg-config files, the programs, man pages,
# completion scripts, ocisbx-local-tenancy); a program builds with
# find_package and with pkg-config, and links libocisbx.a statically with
# the line of docs/building.md (pkg-config --static) and runs without the
# shared library; every object of libocisbx.a links with what ocisbx.pc
# lists; ocisbx-local-tenancy starts a tenancy with the installed emulator
# and the installed ocisbx talks to it; man finds the installed pages.
#   run.sh BUILD_DIR SOURCE_DIR CC
set -euo pipefail
build=$1 src=$2 cc=$3
work=$(mktemp -d)
prefix=$work/prefix
cleanup() {
  [ -x "$prefix/bin/ocisbx-local-tenancy" ] && "$prefix/bin/ocisbx-local-tenancy" stop "$work/tenancy" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install_consumer: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null
# the package's files
for f in include/ocisbx/ocisbx.h include/ocisbx/version.h include/ocisbx/backend.h include/ocisbx/harness.h \
         lib/cmake/ocisbx/ocisbxConfig.cmake lib/pkgconfig/ocisbx.pc lib/libocisbx.a \
         bin/ocisbx bin/ocisbx-emulator bin/ocisbx-local-tenancy \
         share/man/man1/ocisbx.1 share/man/man1/ocisbx-emulator.1 share/man/man1/ocisbx-local-tenancy.1 \
         share/bash-completion/completions/ocisbx share/zsh/site-functions/_ocisbx \
         share/fish/vendor_completions.d/ocisbx.fish; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
for h in "$src"/include/ocisbx/*.h; do
  [ -f "$prefix/include/ocisbx/$(basename "$h")" ] || fail "include/ocisbx/$(basename "$h") is not installed"
done
[ -x "$prefix/bin/ocisbx-local-tenancy" ] || fail "ocisbx-local-tenancy is not executable"
# while the version is 0.x, the SONAME carries the minor version
minor=$(sed -n 's/^#define OCISBX_VERSION_MINOR \([0-9]*\).*/\1/p' "$prefix/include/ocisbx/version.h")
major=$(sed -n 's/^#define OCISBX_VERSION_MAJOR \([0-9]*\).*/\1/p' "$prefix/include/ocisbx/version.h")
want_soname=libocisbx.so.$major; [ "$major" = 0 ] && want_soname=libocisbx.so.0.$minor
soname=$(objdump -p "$prefix"/lib/libocisbx.so | awk '/SONAME/ {print $2}')
[ "$soname" = "$want_soname" ] || fail "SONAME is '$soname', want $want_soname"
[ -e "$prefix/lib/$soname" ] || fail "lib/$soname is not installed"
# Only ocisbx_* symbols are exported.
bad=$(nm -D --defined-only "$prefix"/lib/libocisbx.so | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^ocisbx_' | grep -v '^_' || true)
[ -z "$bad" ] || fail "unexpected exported symbols: $bad"
expected='signature="GBas7grhyrhSKHP6AVIj/h5/Vp8bd/peM79H9Wv8kjoaCivujVXlpbKLjMPeDUhxkFIWtTtLBj3sUzaFj34XE6YZAHc9r2DmE4pMwOAy/kiITcZxa1oHPOeRheC0jP2dqbTll8fmTZVwKZOKHYPtrLJIJQHJjNvxFWeHQjMaR7M="'
key="$src/tests/data/cavage-test-key.pem"
consumer=$src/tests/install/consumer/main.c

cmake -S "$src/tests/install/consumer" -B "$work/cm" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cm" >/dev/null
out=$(LD_LIBRARY_PATH="$prefix/lib" "$work/cm/consumer" "$key")
echo "$out"
grep -qF "$expected" <<<"$out" || fail "find_package consumer: wrong signature"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
"$cc" -std=c11 -o "$work/pc" "$consumer" $(pkg-config --cflags --libs ocisbx)
out=$(LD_LIBRARY_PATH="$prefix/lib" "$work/pc" "$key")
grep -qF "$expected" <<<"$out" || fail "pkg-config consumer: wrong signature"

# The static link line of docs/building.md, as written there (the block
# after <!-- test: static-link -->), for this prefix and this program.
line=$(awk '/<!-- test: static-link -->/ {on = 1; next}
             on && /^```/ {if (started) exit; started = 1; next}
             on && started {if (sub(/\\$/, "")) printf "%s ", $0; else printf "%s; ", $0}' "$src/docs/building.md")
[ -n "$line" ] || fail "docs/building.md has no static-link block"
line=${line//\/opt\/ocisbx/$prefix}
line=${line//sign.c/$consumer}
line=${line//-o sign /-o $work/static }
line=${line/cc /$cc }
grep -q 'PKG_CONFIG_PATH\|pkg-config --static' <<<"$line" || fail "the static-link line does not use pkg-config --static: $line"
echo "static link: $line"
(cd "$work" && eval "$line") || fail "the static-link line of docs/building.md fails"
readelf -d "$work/static" | grep -q 'libocisbx' && fail "the static program needs libocisbx.so"
out=$(env -u LD_LIBRARY_PATH "$work/static" "$key")
grep -qF "$expected" <<<"$out" || fail "static consumer: wrong signature"
# every object of the archive links with what ocisbx.pc lists
"$cc" -std=c11 -o "$work/whole" "$consumer" $(pkg-config --cflags ocisbx) \
  -Wl,--whole-archive "$prefix/lib/libocisbx.a" -Wl,--no-whole-archive $(pkg-config --static --libs-only-l ocisbx | sed 's/-locisbx//') \
  || fail "libocisbx.a needs more than ocisbx.pc lists (Requires.private, Libs.private)"
features=$(sed -n 's/^features //p' <<<"$out")
if (( features & 1 )); then
  pkg-config --static --libs ocisbx | grep -q -- -lyaml || fail "the library reads YAML but ocisbx.pc does not list libyaml"
fi

# the man pages through man's own search (MANPATH), the completion script from its installed place
MANPATH="$prefix/share/man" MANWIDTH=100 man -P cat ocisbx 2>/dev/null | grep -q "ocisbx sandbox create" \
  || fail "man ocisbx (installed) does not show ocisbx sandbox create"
MANPATH="$prefix/share/man" man -P cat ocisbx-emulator 2>/dev/null | grep -q -- "--state-dir" || fail "man ocisbx-emulator"
bash -c 'source "$1"; COMP_WORDS=(ocisbx sandbox-command r); COMP_CWORD=2; _ocisbx; [[ " ${COMPREPLY[*]} " == *" run-and-wait "* ]]' \
  _ "$prefix/share/bash-completion/completions/ocisbx" || fail "the installed bash completion"

# the local test tenancy from the prefix alone: no build directory in sight
env -u BUILD_DIR -u OCISBX_EMULATOR PATH=/usr/bin:/bin "$prefix/bin/ocisbx-local-tenancy" start "$work/tenancy" \
  > "$work/env.out" || fail "ocisbx-local-tenancy start"
grep -q "^export OCI_SANDBOX_ENDPOINT=https://127.0.0.1:" "$work/env.out" || fail "ocisbx-local-tenancy printed: $(cat "$work/env.out")"
list=$(env -u OCI_CLI_PROFILE bash -c 'source "$1/env"; "$2/bin/ocisbx" sandbox-collection list' _ "$work/tenancy" "$prefix") \
  || fail "the installed ocisbx against the installed tenancy"
grep -q '"items"' <<<"$list" || fail "sandbox-collection list printed: $list"
"$prefix/bin/ocisbx-local-tenancy" stop "$work/tenancy"
echo "install_consumer: ok"
