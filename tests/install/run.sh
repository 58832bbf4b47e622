#!/usr/bin/env bash
# install_consumer: installs the build into a temporary prefix, builds the
# consumer with find_package and with pkg-config, runs both.
set -euo pipefail
build=$1 src=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/ocisbx/ocisbx.h"
test -f "$work/prefix/include/ocisbx/version.h"
test -f "$work/prefix/lib/cmake/ocisbx/ocisbxConfig.cmake"
soname=$(objdump -p "$work"/prefix/lib/libocisbx.so | awk '/SONAME/ {print $2}')
[ "$soname" = "libocisbx.so.0" ] || { echo "SONAME is '$soname', want libocisbx.so.0"; exit 1; }
# Only ocisbx_* symbols are exported.
bad=$(nm -D --defined-only "$work"/prefix/lib/libocisbx.so | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^ocisbx_' | grep -v '^_' || true)
[ -z "$bad" ] || { echo "unexpected exported symbols:"; echo "$bad"; exit 1; }
expected='signature="GBas7grhyrhSKHP6AVIj/h5/Vp8bd/peM79H9Wv8kjoaCivujVXlpbKLjMPeDUhxkFIWtTtLBj3sUzaFj34XE6YZAHc9r2DmE4pMwOAy/kiITcZxa1oHPOeRheC0jP2dqbTll8fmTZVwKZOKHYPtrLJIJQHJjNvxFWeHQjMaR7M="'
key="$src/tests/data/cavage-test-key.pem"

cmake -S "$src/tests/install/consumer" -B "$work/cm" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cm" >/dev/null
out=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/cm/consumer" "$key")
echo "$out"
grep -qF "$expected" <<<"$out" || { echo "find_package consumer: wrong signature"; exit 1; }

PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" \
  "$cc" -std=c11 -o "$work/pc" "$src/tests/install/consumer/main.c" \
  $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs ocisbx)
out=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/pc" "$key")
grep -qF "$expected" <<<"$out" || { echo "pkg-config consumer: wrong signature"; exit 1; }
echo "install_consumer: ok"
