"""Loads libocisbx with ctypes and declares the entry points the package uses.

Every prototype is declared (argtypes and restype): ctypes' default of int
arguments and an int result would cut 64-bit pointers and sizes.
"""

import ctypes
import ctypes.util
import os
from pathlib import Path

c_int = ctypes.c_int
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

# Callbacks (user_data last, as every callback of the C API).
CANCEL_FN = ctypes.CFUNCTYPE(c_int, c_void_p)
WRITE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)
GATE_FN = ctypes.CFUNCTYPE(c_int, c_char_p, c_char_p, c_char_p, gate_reply_p, c_void_p)
APPROVAL_FN = ctypes.CFUNCTYPE(c_int, c_char_p, c_char_p, c_char_p, c_char_p, c_void_p)
EVIDENCE_FN = ctypes.CFUNCTYPE(None, c_char_p, c_size_t, c_void_p)

GATE_ALLOW, GATE_DENY, GATE_HOLD = 0, 1, 2

LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3

_LIB_NAMES = ("libocisbx.so", "libocisbx.dylib")


def _repository_root():
    """The repository this package sits in (the directory holding
    CMakeLists.txt and include/ocisbx), or None when installed elsewhere."""
    here = Path(__file__).resolve().parent
    for d in (here, *here.parents):
        if (d / "CMakeLists.txt").is_file() and (d / "include" / "ocisbx").is_dir():
            return d
    return None


def candidates():
    """Where the library is looked for, in order: $OCISBX_LIBRARY (alone when
    set), the repository's build/ directory, then the system."""
    env = os.environ.get("OCISBX_LIBRARY")
    if env:
        return [env]
    out = []
    root = _repository_root()
    if root is not None:
        for name in _LIB_NAMES:
            p = root / "build" / name
            if p.exists():
                out.append(str(p))
    found = ctypes.util.find_library("ocisbx")
    if found:
        out.append(found)
    out.append("libocisbx.so")
    return out


def _load():
    tried = []
    for path in candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise OSError("ocisbx: libocisbx not found; set OCISBX_LIBRARY to its path. Tried: " + "; ".join(tried))


lib, path = _load()

_PROTOS = {
    # common.h
    "ocisbx_version": (c_char_p, []),
    "ocisbx_strerror": (c_char_p, [c_int]),
    "ocisbx_status_name": (c_char_p, [c_int]),
    "ocisbx_global_init": (c_int, []),
    "ocisbx_global_cleanup": (None, []),
    "ocisbx_free": (None, [c_void_p]),
    "ocisbx_error_last": (error_p, []),
    "ocisbx_error_code": (c_int, [error_p]),
    "ocisbx_error_message": (c_char_p, [error_p]),
    "ocisbx_error_http_status": (c_int, [error_p]),
    "ocisbx_error_attempts": (c_int, [error_p]),
    "ocisbx_error_service_code": (c_char_p, [error_p]),
    "ocisbx_error_request_id": (c_char_p, [error_p]),
    "ocisbx_error_clear": (None, []),
    "ocisbx_set_log": (None, [LOG_FN, c_int, c_void_p]),
    # auth.h, http.h, api.h: the REST client the backend uses
    "ocisbx_config_load": (c_int, [c_char_p, c_char_p, POINTER(c_void_p)]),
    "ocisbx_config_get": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_config_free": (None, [c_void_p]),
    "ocisbx_credentials_new": (c_int, [c_char_p, c_void_p, POINTER(c_void_p)]),
    "ocisbx_credentials_free": (None, [c_void_p]),
    "ocisbx_http_options_new": (c_int, [POINTER(c_void_p)]),
    "ocisbx_http_options_free": (None, [c_void_p]),
    "ocisbx_http_options_set_connect_timeout_ms": (c_int, [c_void_p, c_int64]),
    "ocisbx_http_options_set_read_timeout_ms": (c_int, [c_void_p, c_int64]),
    "ocisbx_http_options_set_stream_idle_timeout_ms": (c_int, [c_void_p, c_int64]),
    "ocisbx_http_options_set_deadline_ms": (c_int, [c_void_p, c_int64]),
    "ocisbx_http_options_set_retries": (c_int, [c_void_p, c_int]),
    "ocisbx_http_options_set_max_attempts": (c_int, [c_void_p, c_int]),
    "ocisbx_http_options_set_ca_bundle": (c_int, [c_void_p, c_char_p]),
    "ocisbx_http_options_set_allow_plain_http": (c_int, [c_void_p, c_int]),
    "ocisbx_http_options_set_user_agent_suffix": (c_int, [c_void_p, c_char_p]),
    "ocisbx_client_options_new": (c_int, [POINTER(c_void_p)]),
    "ocisbx_client_options_free": (None, [c_void_p]),
    "ocisbx_client_options_set_endpoint": (c_int, [c_void_p, c_char_p]),
    "ocisbx_client_options_set_region": (c_int, [c_void_p, c_char_p]),
    "ocisbx_client_options_set_credentials": (c_int, [c_void_p, c_void_p]),
    "ocisbx_client_options_set_http_options": (c_int, [c_void_p, c_void_p]),
    "ocisbx_client_options_set_cancel": (c_int, [c_void_p, CANCEL_FN, c_void_p]),
    "ocisbx_client_new": (c_int, [c_void_p, POINTER(c_void_p)]),
    # settings.h: the one resolver of the client settings
    "ocisbx_settings_new": (c_int, [POINTER(c_void_p)]),
    "ocisbx_settings_free": (None, [c_void_p]),
    "ocisbx_settings_set": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ocisbx_settings_set_default": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ocisbx_settings_resolve": (c_int, [c_void_p]),
    "ocisbx_settings_get": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_settings_source": (c_int, [c_void_p, c_char_p]),
    "ocisbx_settings_origin": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_settings_client_new": (c_int, [c_void_p, c_void_p, POINTER(c_void_p)]),
    "ocisbx_client_free": (None, [c_void_p]),
    "ocisbx_client_endpoint": (c_char_p, [c_void_p]),
    "ocisbx_backend_options_set_client": (c_int, [c_void_p, c_void_p]),
    # backend.h: options
    "ocisbx_backend_options_new": (c_int, [POINTER(backend_options_p)]),
    "ocisbx_backend_options_free": (None, [backend_options_p]),
    "ocisbx_backend_options_set_runtime": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_shape": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_expiration": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_warmpool_name": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_display_name": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_add_env": (c_int, [backend_options_p, c_char_p, c_char_p, c_int]),
    "ocisbx_backend_options_set_max_output_bytes": (c_int, [backend_options_p, c_size_t]),
    "ocisbx_backend_options_set_ready_timeout_ms": (c_int, [backend_options_p, c_int64]),
    "ocisbx_backend_options_set_poll_interval_ms": (c_int, [backend_options_p, c_int64]),
    "ocisbx_backend_options_set_config_file": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_profile": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_region": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_endpoint": (c_int, [backend_options_p, c_char_p]),
    "ocisbx_backend_options_set_cancel": (c_int, [backend_options_p, CANCEL_FN, c_void_p]),
    "ocisbx_backend_options_set_isolation": (c_int, [backend_options_p, c_int]),
    "ocisbx_backend_options_set_network": (c_int, [backend_options_p, c_int]),
    # backend.h: the backend
    "ocisbx_backend_create": (c_int, [c_char_p, backend_options_p, POINTER(backend_p)]),
    "ocisbx_backend_connect": (c_int, [c_char_p, backend_options_p, POINTER(backend_p)]),
    "ocisbx_backend_local": (c_int, [c_char_p, backend_options_p, POINTER(backend_p)]),
    "ocisbx_backend_label": (c_char_p, [backend_p]),
    "ocisbx_backend_kind": (c_char_p, [backend_p]),
    "ocisbx_backend_is_host_shell": (c_int, [backend_p]),
    "ocisbx_backend_sandbox_id": (c_char_p, [backend_p]),
    "ocisbx_backend_sandbox_json": (c_int, [backend_p, POINTER(c_void_p)]),
    "ocisbx_backend_extend": (c_int, [backend_p, c_char_p, POINTER(c_void_p)]),
    "ocisbx_backend_close": (c_int, [backend_p]),
    "ocisbx_backend_disown": (c_int, [backend_p]),
    "ocisbx_backend_free": (None, [backend_p]),
    # backend.h: exec
    "ocisbx_exec_options_new": (c_int, [POINTER(exec_options_p)]),
    "ocisbx_exec_options_free": (None, [exec_options_p]),
    "ocisbx_exec_options_set_timeout_ms": (c_int, [exec_options_p, c_int64]),
    "ocisbx_exec_options_set_cwd": (c_int, [exec_options_p, c_char_p]),
    "ocisbx_exec_options_add_env": (c_int, [exec_options_p, c_char_p, c_char_p, c_int]),
    "ocisbx_exec_options_set_max_output_bytes": (c_int, [exec_options_p, c_size_t]),
    "ocisbx_exec_options_set_on_output": (c_int, [exec_options_p, WRITE_FN, c_void_p]),
    "ocisbx_exec_result_free": (None, [exec_result_p]),
    "ocisbx_exec_result_exit_code": (c_int, [exec_result_p, POINTER(c_int)]),
    "ocisbx_exec_result_timed_out": (c_int, [exec_result_p]),
    "ocisbx_exec_result_truncated": (c_int, [exec_result_p]),
    "ocisbx_exec_result_output": (c_void_p, [exec_result_p, POINTER(c_size_t)]),
    "ocisbx_exec_result_total_bytes": (c_uint64, [exec_result_p]),
    "ocisbx_exec_result_total_sha256": (c_char_p, [exec_result_p]),
    "ocisbx_exec_result_duration_ms": (c_int64, [exec_result_p]),
    "ocisbx_exec_result_command_id": (c_char_p, [exec_result_p]),
    "ocisbx_backend_exec": (c_int, [backend_p, c_char_p, exec_options_p, POINTER(exec_result_p)]),
    # backend.h: files (bytes: pointer + length)
    "ocisbx_backend_read_bytes": (c_int, [backend_p, c_char_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "ocisbx_backend_write": (c_int, [backend_p, c_char_p, c_void_p, c_size_t]),
    # harness.h
    "ocisbx_gate_decision_name": (c_char_p, [c_int]),
    "ocisbx_evidence_verify_file": (c_int, [c_char_p, POINTER(c_int64), POINTER(c_int64)]),
    "ocisbx_harness_options_new": (c_int, [POINTER(harness_options_p)]),
    "ocisbx_harness_options_free": (None, [harness_options_p]),
    "ocisbx_harness_options_add_env": (c_int, [harness_options_p, c_char_p, c_char_p, c_int]),
    "ocisbx_harness_options_require_person": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_options_deny_label": (c_int, [harness_options_p, c_char_p, c_char_p]),
    "ocisbx_harness_options_set_policy_file": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_options_set_evidence_file": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_new": (c_int, [backend_p, harness_options_p, POINTER(harness_p)]),
    "ocisbx_harness_free": (None, [harness_p]),
    "ocisbx_gate_reply_set_reason": (c_int, [gate_reply_p, c_char_p]),
    "ocisbx_harness_set_gate": (c_int, [harness_p, GATE_FN, c_void_p]),
    "ocisbx_harness_set_approval": (c_int, [harness_p, APPROVAL_FN, c_void_p]),
    "ocisbx_harness_set_evidence_callback": (c_int, [harness_p, EVIDENCE_FN, c_void_p]),
    "ocisbx_harness_tools_json": (c_int, [harness_p, c_char_p, POINTER(c_void_p)]),
    "ocisbx_harness_prompt": (c_int, [harness_p, POINTER(c_void_p)]),
    "ocisbx_harness_call_json": (c_int, [harness_p, c_char_p, c_char_p, POINTER(c_void_p)]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
del _name, _res, _args, _f


def take_string(p):
    """A char * the library gave us: copied to str, then ocisbx_free'd."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.ocisbx_free(p)


def take_bytes(p, n):
    """A buffer of n bytes the library gave us: copied, then ocisbx_free'd."""
    if not p:
        return b""
    try:
        return ctypes.string_at(p, n)
    finally:
        lib.ocisbx_free(p)


def text(b):
    """A const char * result (bytes or None) as str or None."""
    return None if b is None else b.decode("utf-8", "replace")


def arg(s):
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
