"""Loads libocisbx with ctypes; the modules of the package declare the
prototypes of the functions they call with declare().

Every prototype is declared (argtypes and restype): ctypes' default of int
arguments and an int result would cut 64-bit pointers and sizes. A
function the loaded library does not have (an older one) is declared as a
stand-in that raises when called, so the rest of the package still works.
"""

import ctypes
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._version import SONAME

c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
POINTER = ctypes.POINTER

# Opaque handles: only ever passed back to the library.
backend_options_p = c_void_p
backend_p = c_void_p
exec_options_p = c_void_p
exec_result_p = c_void_p
harness_options_p = c_void_p
harness_p = c_void_p
gate_reply_p = c_void_p
error_p = c_void_p
client_p = c_void_p

# Callbacks (user_data last, as every callback of the C API).
CANCEL_FN = ctypes.CFUNCTYPE(c_int, c_void_p)
WRITE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)
GATE_FN = ctypes.CFUNCTYPE(c_int, c_char_p, c_char_p, c_char_p, gate_reply_p, c_void_p)
APPROVAL_FN = ctypes.CFUNCTYPE(c_int, c_char_p, c_char_p, c_char_p, c_char_p, c_void_p)
EVIDENCE_FN = ctypes.CFUNCTYPE(None, c_char_p, c_size_t, c_void_p)

GATE_ALLOW, GATE_DENY, GATE_HOLD = 0, 1, 2

LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3

_FILE_NAMES = (SONAME, "libocisbx.so", "libocisbx.dylib")


def _repository_root() -> Optional[Path]:
    """The repository this package sits in (the directory holding
    CMakeLists.txt and include/ocisbx), or None when installed elsewhere."""
    here = Path(__file__).resolve().parent
    for d in (here, *here.parents):
        if (d / "CMakeLists.txt").is_file() and (d / "include" / "ocisbx").is_dir():
            return d
    return None


def candidates() -> List[str]:
    """Where the library is looked for, in order: $OCISBX_LIBRARY (alone when
    set); next to the package (in its directory, then the one above it); the
    repository's build/ directory when the package is used from its source
    tree; then the system's loader, by the versioned name (SONAME)."""
    env = os.environ.get("OCISBX_LIBRARY")
    if env:
        return [env]
    out = []
    here = Path(__file__).resolve().parent
    dirs = [here, here.parent]
    root = _repository_root()
    if root is not None:
        dirs.append(root / "build")
    for d in dirs:
        for name in _FILE_NAMES:
            p = d / name
            if p.exists() and str(p) not in out:
                out.append(str(p))
    out.append(SONAME)
    return out


def _load() -> Tuple[ctypes.CDLL, str]:
    tried = []
    for path in candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    how = ("$OCISBX_LIBRARY is set: only it is tried" if os.environ.get("OCISBX_LIBRARY")
           else "set OCISBX_LIBRARY to its path")
    raise OSError("ocisbx: libocisbx not found; %s. Tried: %s" % (how, "; ".join(tried)))


lib, path = _load()

Prototype = Tuple[Any, Sequence[Any]]
missing: List[str] = []  # functions the loaded library does not have


def _absent(name: str):
    def call(*_args: Any) -> Any:
        raise NotImplementedError("ocisbx: %s is not in the loaded library %s (an older version?)" % (name, path))

    return call


def declare(protos: Dict[str, Prototype]) -> None:
    """Declares {name: (restype, [argtypes])} on lib. Each module declares
    the functions it calls, next to the code that calls them."""
    for name, (res, args) in protos.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            setattr(lib, name, _absent(name))
            continue
        f.restype = res
        f.argtypes = list(args)


declare({
    "ocisbx_version": (c_char_p, []),
    "ocisbx_features": (c_uint, []),
    "ocisbx_strerror": (c_char_p, [c_int]),
    "ocisbx_status_name": (c_char_p, [c_int]),
    "ocisbx_global_init": (c_int, []),
    "ocisbx_global_cleanup": (None, []),
    "ocisbx_free": (None, [c_void_p]),
})


def take_string(p: Optional[int]) -> Optional[str]:
    """A char * the library gave us: copied to str, then ocisbx_free'd."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.ocisbx_free(p)


def take_bytes(p: Optional[int], n: int) -> bytes:
    """A buffer of n bytes the library gave us: copied, then ocisbx_free'd."""
    if not p:
        return b""
    try:
        return ctypes.string_at(p, n)
    finally:
        lib.ocisbx_free(p)


def text(b: Optional[bytes]) -> Optional[str]:
    """A const char * result (bytes or None) as str or None."""
    return None if b is None else b.decode("utf-8", "replace")


StrArg = Union[str, bytes, "os.PathLike[str]", None]


def arg(s: Any) -> Optional[bytes]:
    """A str (or None) for a const char * argument."""
    if s is None:
        return None
    if isinstance(s, bytes):
        b = s
    elif isinstance(s, os.PathLike):
        b = os.fsencode(s)
    else:
        b = str(s).encode("utf-8")
    if b"\0" in b:
        # c_char_p would silently cut the string at the NUL
        raise ValueError("ocisbx: a string argument holds a NUL byte")
    return b
