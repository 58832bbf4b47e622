"""ocisbx.Error and the reading of the library's per-thread error object."""

from typing import Optional

from . import _native
from ._native import arg, c_char_p, c_int, error_p, lib, text

__all__ = ["Error", "set_error"]

_native.declare({
    "ocisbx_error_last": (error_p, []),
    "ocisbx_error_code": (c_int, [error_p]),
    "ocisbx_error_message": (c_char_p, [error_p]),
    "ocisbx_error_http_status": (c_int, [error_p]),
    "ocisbx_error_attempts": (c_int, [error_p]),
    "ocisbx_error_service_code": (c_char_p, [error_p]),
    "ocisbx_error_request_id": (c_char_p, [error_p]),
    "ocisbx_error_clear": (None, []),
    "ocisbx_error_set": (c_int, [c_int, c_char_p]),
})


def status_name(value: int) -> str:
    """"ENOTFOUND" for -3: the status name without its prefix."""
    name = text(lib.ocisbx_status_name(int(value))) or "OCISBX_UNKNOWN"
    return name[len("OCISBX_"):] if name.startswith("OCISBX_") else name


class Error(Exception):
    """A failed library call.

    code        the status name without its prefix: "ENOTFOUND", "EAUTH", ...
    errno       the status value (negative int, e.g. -3)
    status      HTTP status of the failed answer, or None
    request_id  the opc-request-id of the failed request, or None
    service_code the service's error code ("NotAuthorizedOrNotFound"), or None
    attempts    HTTP attempts the call made (0 when it was no HTTP call)
    str(e)      the library's one-line message
    """

    def __init__(self, message: str, errno: int = -1, code: Optional[str] = None, status: Optional[int] = None,
                 request_id: Optional[str] = None, service_code: Optional[str] = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.code = code if code is not None else status_name(errno)
        self.status = status
        self.request_id = request_id
        self.service_code = service_code
        self.attempts = attempts
        self.bad_line: Optional[int] = None  # verify_evidence: the first line that breaks the chain

    def __repr__(self) -> str:
        return "ocisbx.Error(%r, code=%r, status=%r, request_id=%r)" % (
            self.message,
            self.code,
            self.status,
            self.request_id,
        )


def last_error(rc: int) -> Error:
    """The thread's error object, read right after the call that failed (it
    is per OS thread and valid until the next library call on it)."""
    e = lib.ocisbx_error_last()
    code = lib.ocisbx_error_code(e)
    message = text(lib.ocisbx_error_message(e))
    status = lib.ocisbx_error_http_status(e)
    request_id = text(lib.ocisbx_error_request_id(e))
    service_code = text(lib.ocisbx_error_service_code(e))
    attempts = lib.ocisbx_error_attempts(e)
    if code == 0:  # the call failed without setting the error: use its rc
        code = rc
        message = text(lib.ocisbx_strerror(rc))
    return Error(
        message or text(lib.ocisbx_strerror(code)) or "",
        errno=code,
        status=status or None,
        request_id=request_id or None,
        service_code=service_code,
        attempts=attempts,
    )


def check(rc: int) -> int:
    """rc, or the thread's error raised when rc is negative."""
    if rc < 0:
        raise last_error(rc)
    return rc


def closed(what: str) -> Error:
    return Error("%s is closed" % what, errno=-4)  # OCISBX_ECONFLICT, as the C API says for a closed backend


def set_error(code: str, message: Optional[str] = None) -> int:
    """ocisbx_error_set: sets the calling thread's library error, as a
    callback does to say why it failed. code is a status name ("EDENIED")
    or its negative value; returns the value."""
    if isinstance(code, str):
        name = code if code.startswith("OCISBX_") else "OCISBX_" + code
        value = next((v for v in range(0, -100, -1) if text(lib.ocisbx_status_name(v)) == name), None)
        if value is None:
            raise ValueError("ocisbx: %s is not a status name" % code)
    else:
        value = int(code)
    return lib.ocisbx_error_set(value, arg(message))
