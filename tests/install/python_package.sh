#!/usr/bin/env bash
# python_package: examples/ffi/python installed with pip into a fresh
# virtual environment of Debian's python3 (python3-venv), offline:
# --no-build-isolation with Debian's python3-setuptools and python3-wheel;
# then imported from elsewhere, finding the library by $OCISBX_LIBRARY,
# next to the package, and through the system's loader by its versioned
# name, with a clear error when there is none; its typing marker is
# installed and a backend runs a command. (The venv uses the system's pip:
# --without-pip saves the copy of pip that ensurepip would install.)
#   python_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
py=/usr/bin/python3 # Debian's, whatever python3 comes first on PATH
[ -x "$py" ] || { echo "python_package: $py (Debian's python3) is missing"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "python_package: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$work/prefix" >/dev/null
soname=$(objdump -p "$work/prefix/lib/libocisbx.so" | awk '/SONAME/ {print $2}')
"$py" -m venv --without-pip --system-site-packages "$work/venv" # Debian's pip, setuptools, wheel
# from a copy: pip builds in the tree it is given
mkdir "$work/src" && cp -r "$src/examples/ffi/python/pyproject.toml" "$src/examples/ffi/python/ocisbx" "$work/src/"
env -u PIP_FIND_LINKS "$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-index \
  --disable-pip-version-check "$work/src" || fail "pip install failed"
rm -rf "$work/src"
vpy=$work/venv/bin/python
pkg=$("$vpy" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("ocisbx").origin))' 2>/dev/null ||
      true)
[ -f "$pkg/py.typed" ] || fail "py.typed is not installed (package at '$pkg')"
case $pkg in "$work/venv/"*) ;; *) fail "the package is not the venv's: $pkg" ;; esac
mkdir "$work/elsewhere" "$work/ws"
cd "$work/elsewhere"
check='import ocisbx, sys
print(ocisbx.library_path)
assert ocisbx.version() == ocisbx.__version__, (ocisbx.version(), ocisbx.__version__)
assert ocisbx.SONAME == sys.argv[1], (ocisbx.SONAME, sys.argv[1])
b = ocisbx.Backend.local(sys.argv[2], isolation=False)
r = b.exec("echo hello from the package")
assert r["exit_code"] == 0 and b"hello from the package" in r["output"], r
b.close()'
# 1. $OCISBX_LIBRARY
got=$(env -u LD_LIBRARY_PATH OCISBX_LIBRARY="$work/prefix/lib/$soname" "$vpy" -c "$check" "$soname" "$work/ws") ||
  fail "with OCISBX_LIBRARY"
[ "$(head -n1 <<<"$got")" = "$work/prefix/lib/$soname" ] || fail "OCISBX_LIBRARY: loaded $got"
# 2. the system's loader, by the versioned name (the prefix's lib/ as a system directory)
got=$(env -u OCISBX_LIBRARY LD_LIBRARY_PATH="$work/prefix/lib" "$vpy" -c "$check" "$soname" "$work/ws") ||
  fail "through the loader"
[ "$(head -n1 <<<"$got")" = "$soname" ] || fail "the loader: loaded $got"
# 3. next to the package
cp "$work/prefix/lib/$soname" "$pkg/"
got=$(env -u OCISBX_LIBRARY -u LD_LIBRARY_PATH "$vpy" -c "$check" "$soname" "$work/ws") || fail "next to the package"
[ "$(head -n1 <<<"$got")" = "$pkg/$soname" ] || fail "next to the package: loaded $got"
rm "$pkg/$soname"
# 4. none: one clear error naming what was tried
if out=$(env -u OCISBX_LIBRARY -u LD_LIBRARY_PATH "$vpy" -c 'import ocisbx' 2>&1); then
  case $(ldconfig -p 2>/dev/null) in *"$soname"*) ;; *) fail "imported without any library: $out" ;; esac
else
  grep -q "libocisbx not found; set OCISBX_LIBRARY to its path" <<<"$out" || fail "no clear error: $out"
  grep -q "$soname" <<<"$out" || fail "the error does not name $soname: $out"
fi
echo "python_package: ok"
