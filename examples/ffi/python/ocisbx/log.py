"""The library's log lines, to a Python callable."""

import sys
import traceback
from typing import Callable, Optional, Union

from . import _native
from ._native import LOG_FN, c_int, c_void_p, lib, text

__all__ = ["set_log"]

_native.declare({"ocisbx_set_log": (None, [LOG_FN, c_int, c_void_p])})

_log_keep = None


def set_log(fn: Optional[Callable[[int, Optional[str]], None]], level: Union[str, int] = "info") -> None:
    """Library log lines to fn(level_int, line) at or below level (error,
    warn, info, debug); fn None turns logging off. Global."""
    global _log_keep
    levels = {"error": 0, "warn": 1, "info": 2, "debug": 3}
    max_level = levels[level] if isinstance(level, str) else int(level)
    if fn is None:
        lib.ocisbx_set_log(LOG_FN(), 0, None)
        _log_keep = None
        return

    def trampoline(lvl, line, _ud):
        try:
            fn(lvl, text(line))
        except Exception:  # never let an exception unwind into C
            traceback.print_exc(file=sys.stderr)

    cb = LOG_FN(trampoline)
    lib.ocisbx_set_log(cb, max_level, None)
    _log_keep = cb  # the C side keeps the pointer: keep the thunk alive
