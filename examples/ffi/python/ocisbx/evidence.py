"""Evidence files: checking the hash chain of a harness evidence file
(include/ocisbx/harness.h, docs/harness.md#evidence)."""

import ctypes
from typing import Optional

from . import _native
from ._errors import Error, last_error
from ._native import StrArg, arg, c_char_p, c_int, c_int64, lib

__all__ = ["verify_evidence", "evidence_head"]

P = ctypes.POINTER
_native.declare({
    "ocisbx_evidence_verify_file": (c_int, [c_char_p, P(c_int64), P(c_int64)]),
    "ocisbx_evidence_verify_file_head": (c_int, [c_char_p, P(c_int64), P(c_int64), c_char_p]),
})

_HEAD_SIZE = 65  # OCISBX_EVIDENCE_HEAD_SIZE: 64 hex digits and a NUL


def _verify(path: StrArg):
    records = ctypes.c_int64(0)
    bad = ctypes.c_int64(0)
    head = ctypes.create_string_buffer(_HEAD_SIZE)
    rc = lib.ocisbx_evidence_verify_file_head(arg(path), ctypes.byref(records), ctypes.byref(bad), head)
    if rc < 0:
        err = last_error(rc)
        err.bad_line = bad.value or None
        raise err
    return records.value, head.value.decode("ascii")


def verify_evidence(path: StrArg, head: Optional[str] = None) -> int:
    """Checks an evidence file's chain: the number of records, or Error
    (code "EINTEGRITY", with .bad_line) when the chain is broken. The chain
    cannot show a changed last record or a removed tail: give the head kept
    elsewhere (evidence_head) and it must match the last line's SHA-256."""
    records, got = _verify(path)
    if head is not None and got.lower() != head.lower():
        err = Error("evidence %s: the last line hashes to %s, not the head %s: the last record was changed, or "
                    "records were removed from or added at the end" % (path, got, head), errno=-10)
        err.bad_line = records or None
        raise err
    return records


def evidence_head(path: StrArg) -> str:
    """The chain's head: the lowercase hex SHA-256 of the last line (the one
    of the chain's start for an empty file), after the chain was checked."""
    return _verify(path)[1]
