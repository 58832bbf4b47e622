#!/usr/bin/env bash
# build_options: how the build is configured, checked without compiling
# (each configure takes a few seconds), with cmocka, libyaml and
# libmicrohttpd hidden from pkg-config:
# - tests off: the examples are still built (no cmocka needed), and
#   OCISBX_BUILD_EXAMPLES=OFF leaves them out;
# - OCISBX_WITH_YAML: AUTO without libyaml builds a library that does not
#   link it (no -lyaml, no OCISBX_HAVE_YAML, not in ocisbx.pc); ON without
#   it stops naming libyaml-dev; another value is refused;
# - the docs target finds a doxygen installed after configuring.
#   configure.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "build_options: $*" >&2; exit 1; }
# every pkg-config module of this machine but the hidden ones
mkdir "$work/pc"
IFS=: read -r -a dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${dirs[@]}"; do
  for f in "$d"/*.pc; do
    [ -e "$f" ] || continue
    case $(basename "$f") in cmocka.pc | yaml-0.1.pc | libmicrohttpd.pc) continue ;; esac
    [ -e "$work/pc/$(basename "$f")" ] || ln -s "$f" "$work/pc/"
  done
done
export PKG_CONFIG_LIBDIR=$work/pc
flat() { tr '\n' ' ' <"$1" | tr -s ' '; } # a log with CMake's line wrapping undone
configure() { # DIR ARGS...: the configure's output in DIR.log
  local dir=$1; shift
  cmake -S "$src" -B "$dir" -G Ninja -DOCISBX_BUILD_TESTS=OFF -DOCISBX_BUILD_EMULATOR=OFF "$@" >"$dir.log" 2>&1
}

configure "$work/a" || { cat "$work/a.log"; fail "tests and emulator off, no cmocka, no libyaml: configure failed"; }
grep -q 'build examples/agent_loop\b\|examples/agent_loop:' "$work/a/build.ninja" || fail "no example is built without the tests"
grep -q 'OCISBX_HAVE_YAML' "$work/a/build.ninja" && fail "OCISBX_HAVE_YAML is defined without libyaml"
grep -q -- '-lyaml' "$work/a/build.ninja" && fail "something links libyaml without it"
grep -q 'yaml' "$work/a/ocisbx.pc" && fail "ocisbx.pc names yaml: $(grep Requires "$work/a/ocisbx.pc")"
grep -q '^Requires.private: libcrypto libcjson$' "$work/a/ocisbx.pc" || fail "ocisbx.pc: $(grep Requires "$work/a/ocisbx.pc")"
grep -q '^CMOCKA_\|^pkgcfg_lib_CMOCKA' "$work/a/CMakeCache.txt" && fail "cmocka was looked for with the tests off"

configure "$work/b" -DOCISBX_BUILD_EXAMPLES=OFF || fail "OCISBX_BUILD_EXAMPLES=OFF: configure failed"
grep -q 'examples/agent_loop' "$work/b/build.ninja" && fail "OCISBX_BUILD_EXAMPLES=OFF still builds the examples"

configure "$work/c" -DOCISBX_WITH_YAML=ON && fail "OCISBX_WITH_YAML=ON without libyaml configured"
flat "$work/c.log" | grep -q 'OCISBX_WITH_YAML=ON: libyaml .* not found; install libyaml-dev' || { cat "$work/c.log"; fail "OCISBX_WITH_YAML=ON: no clear message"; }
configure "$work/d" -DOCISBX_WITH_YAML=MAYBE && fail "OCISBX_WITH_YAML=MAYBE configured"
flat "$work/d.log" | grep -q 'OCISBX_WITH_YAML is AUTO, ON or OFF' || fail "OCISBX_WITH_YAML=MAYBE: no clear message"
unset PKG_CONFIG_LIBDIR
configure "$work/e" -DOCISBX_WITH_YAML=OFF || fail "OCISBX_WITH_YAML=OFF (libyaml present): configure failed"
grep -q 'OCISBX_HAVE_YAML' "$work/e/build.ninja" && fail "OCISBX_WITH_YAML=OFF defines OCISBX_HAVE_YAML"

# the docs target: doxygen looked for when it runs, not when configured
mkdir "$work/bin"
printf '#!/bin/sh\necho "fake doxygen $1" > "%s/doxygen-ran"\n' "$work" > "$work/bin/doxygen"
chmod +x "$work/bin/doxygen"
path_without=$(dirname "$(command -v cmake)"):$(dirname "$(command -v ninja)"):/usr/bin:/bin
if ! PATH=$path_without command -v doxygen >/dev/null; then
  PATH=$path_without cmake --build "$work/a" --target docs >"$work/docs.log" 2>&1 && fail "docs without doxygen succeeded"
  grep -q 'doxygen is not installed (apt-get install doxygen)' "$work/docs.log" || fail "docs without doxygen: $(cat "$work/docs.log")"
fi
PATH=$work/bin:$path_without cmake --build "$work/a" --target docs >"$work/docs.log" 2>&1 || { cat "$work/docs.log"; fail "docs with doxygen installed after configuring failed"; }
grep -q "fake doxygen $work/a/Doxyfile" "$work/doxygen-ran" || fail "the docs target did not run the doxygen on PATH"
echo "build_options: ok"
