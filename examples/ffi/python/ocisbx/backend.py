"""ocisbx.Backend: a workspace, an OCI sandbox or a local directory
(include/ocisbx/backend.h)."""

import ctypes
import json
import sys
import traceback
from typing import Any, Callable, Dict, Optional, Tuple, Union

from . import _native
from ._client import Client, _Options
from ._errors import Error, check, closed
from ._native import (WRITE_FN, StrArg, arg, backend_options_p, backend_p, c_char_p, c_int, c_int64, c_size_t,
                      c_uint64, c_void_p, client_p, exec_options_p, exec_result_p, lib, take_bytes, take_string, text)

__all__ = ["Backend"]

P = ctypes.POINTER
_native.declare({
    "ocisbx_backend_create": (c_int, [c_char_p, backend_options_p, P(backend_p)]),
    "ocisbx_backend_connect": (c_int, [c_char_p, backend_options_p, P(backend_p)]),
    "ocisbx_backend_local": (c_int, [c_char_p, backend_options_p, P(backend_p)]),
    "ocisbx_backend_label": (c_char_p, [backend_p]),
    "ocisbx_backend_kind": (c_char_p, [backend_p]),
    "ocisbx_backend_is_host_shell": (c_int, [backend_p]),
    "ocisbx_backend_sandbox_id": (c_char_p, [backend_p]),
    "ocisbx_backend_sandbox_json": (c_int, [backend_p, P(c_void_p)]),
    "ocisbx_backend_client": (client_p, [backend_p]),
    "ocisbx_backend_extend": (c_int, [backend_p, c_char_p, P(c_void_p)]),
    "ocisbx_backend_close": (c_int, [backend_p]),
    "ocisbx_backend_disown": (c_int, [backend_p]),
    "ocisbx_backend_free": (None, [backend_p]),
    # exec
    "ocisbx_exec_options_new": (c_int, [P(exec_options_p)]),
    "ocisbx_exec_options_free": (None, [exec_options_p]),
    "ocisbx_exec_options_set_timeout_ms": (c_int, [exec_options_p, c_int64]),
    "ocisbx_exec_options_set_cwd": (c_int, [exec_options_p, c_char_p]),
    "ocisbx_exec_options_add_env": (c_int, [exec_options_p, c_char_p, c_char_p, c_int]),
    "ocisbx_exec_options_set_max_output_bytes": (c_int, [exec_options_p, c_size_t]),
    "ocisbx_exec_options_set_on_output": (c_int, [exec_options_p, WRITE_FN, c_void_p]),
    "ocisbx_exec_result_free": (None, [exec_result_p]),
    "ocisbx_exec_result_has_exit_code": (c_int, [exec_result_p, P(c_int)]),
    "ocisbx_exec_result_timed_out": (c_int, [exec_result_p]),
    "ocisbx_exec_result_truncated": (c_int, [exec_result_p]),
    "ocisbx_exec_result_output": (c_void_p, [exec_result_p, P(c_size_t)]),
    "ocisbx_exec_result_total_bytes": (c_uint64, [exec_result_p]),
    "ocisbx_exec_result_total_sha256": (c_char_p, [exec_result_p]),
    "ocisbx_exec_result_duration_ms": (c_int64, [exec_result_p]),
    "ocisbx_exec_result_command_id": (c_char_p, [exec_result_p]),
    "ocisbx_exec_options_set_yield_ms": (c_int, [exec_options_p, c_int64]),
    "ocisbx_exec_result_job_id": (c_char_p, [exec_result_p]),
    "ocisbx_backend_exec": (c_int, [backend_p, c_char_p, exec_options_p, P(exec_result_p)]),
    # background jobs (their state lives in the workspace)
    "ocisbx_backend_job_start": (c_int, [backend_p, c_char_p, exec_options_p, P(c_void_p)]),
    "ocisbx_backend_job_status": (c_int, [backend_p, c_char_p, P(c_void_p)]),
    "ocisbx_backend_job_wait": (c_int, [backend_p, c_char_p, c_int64, P(c_void_p)]),
    "ocisbx_job_status_free": (None, [c_void_p]),
    "ocisbx_job_status_running": (c_int, [c_void_p]),
    "ocisbx_job_status_has_exit_code": (c_int, [c_void_p, P(c_int)]),
    "ocisbx_job_status_timed_out": (c_int, [c_void_p]),
    "ocisbx_job_status_killed": (c_int, [c_void_p]),
    "ocisbx_job_status_duration_ms": (c_int64, [c_void_p]),
    "ocisbx_job_status_output_bytes": (c_uint64, [c_void_p]),
    "ocisbx_backend_job_output": (c_int, [backend_p, c_char_p, c_int64, c_size_t, P(c_void_p), P(c_size_t),
                                          P(c_uint64)]),
    "ocisbx_backend_job_stop": (c_int, [backend_p, c_char_p, P(c_int)]),
    "ocisbx_backend_detach_jobs": (c_int, [backend_p]),
    # files (bytes: pointer + length)
    "ocisbx_backend_read_bytes": (c_int, [backend_p, c_char_p, P(c_void_p), P(c_size_t)]),
    "ocisbx_backend_write": (c_int, [backend_p, c_char_p, c_void_p, c_size_t]),
})


class Backend:
    """A workspace: an OCI sandbox (create / connect) or a local directory.

    Options (keyword arguments, each else the environment, else the config
    file, else the library's default: the library's one settings resolver,
    docs/settings.md): region ($OCI_SANDBOX_REGION, $OCI_CLI_REGION), endpoint
    ($OCI_SANDBOX_ENDPOINT), profile ($OCI_SANDBOX_PROFILE, $OCI_CLI_PROFILE),
    config_file ($OCI_CONFIG_FILE, $OCI_CLI_CONFIG_FILE, else ~/.oci/config),
    runtime, shape, expiration ($OCI_SANDBOX_RUNTIME, _SHAPE, _EXPIRATION), warmpool, display_name, env (dict), secret_env (dict),
    max_output_bytes, ready_timeout_ms, poll_interval_ms, cancel (a callable
    polled while a call blocks; true cancels); for the REST client: auth
    ("api_key", "security_token", "instance_principal",
    "resource_principal"; else $OCI_SANDBOX_AUTH, $OCI_CLI_AUTH; else
    security_token for a profile with security_token_file, else api_key), connect_timeout_ms,
    read_timeout_ms, stream_idle_timeout_ms, deadline_ms, max_attempts,
    retries (bool), ca_bundle ($OCI_SANDBOX_CA_BUNDLE), allow_plain_http
    (a loopback http:// endpoint is allowed without it), user_agent_suffix; for local: isolation,
    network.

    Use it in a with block, or call close(): a created sandbox is deleted
    then. The handle itself is freed when the object goes (harnesses keep
    their backend alive)."""

    def __init__(self, _handle, _cancel_cb=None, _client=None):
        if not isinstance(_handle, ctypes.c_void_p) or not _handle:
            raise TypeError("use Backend.create, Backend.connect or Backend.local")
        self._h = _handle
        self._cancel_cb = _cancel_cb  # the C options were copied, with the pointer to this thunk
        self._client = _client  # borrowed by the C backend: freed after it
        self._closed = False

    @classmethod
    def _open(cls, fn, first, kwargs, remote):
        opts = _Options(kwargs, remote)
        out = ctypes.c_void_p()
        try:
            check(fn(arg(first), opts.handle, ctypes.byref(out)))
        except BaseException:
            if opts.client is not None:
                opts.client.free()
            raise
        finally:
            opts.free()
        return cls(out, opts.cancel_cb, opts.client)

    @classmethod
    def create(cls, project_id: Optional[str] = None, **options: Any) -> "Backend":
        """Creates a sandbox (project_id None: $OCI_SANDBOX_PROJECT_ID) and
        waits until it runs. The backend owns it: close() deletes it."""
        return cls._open(lib.ocisbx_backend_create, project_id, options, True)

    @classmethod
    def connect(cls, sandbox_id: str, **options: Any) -> "Backend":
        """Attaches to an existing sandbox; close() never deletes it."""
        return cls._open(lib.ocisbx_backend_connect, sandbox_id, options, True)

    @classmethod
    def local(cls, directory: StrArg, **options: Any) -> "Backend":
        """A local directory as the workspace (commands under bubblewrap
        unless isolation=False)."""
        return cls._open(lib.ocisbx_backend_local, directory, options, False)

    def _handle(self):
        if not self._h:
            raise closed("the backend")
        return self._h

    # Strings owned by the backend handle: copied out, never freed here.
    @property
    def label(self) -> Optional[str]:
        return text(lib.ocisbx_backend_label(self._handle()))

    @property
    def kind(self) -> Optional[str]:
        return text(lib.ocisbx_backend_kind(self._handle()))

    @property
    def sandbox_id(self) -> Optional[str]:
        return text(lib.ocisbx_backend_sandbox_id(self._handle()))

    @property
    def client(self) -> Optional[Client]:
        """The REST client of an OCI backend (ocisbx_backend_client;
        borrowed: valid while the backend lives), None for a local one."""
        h = self._handle()
        if "ocisbx_backend_client" not in _native.missing:
            c = lib.ocisbx_backend_client(h)
            return Client(c, self) if c else None
        return Client(self._client.handle.value, self) if self._client is not None else None

    @property
    def is_host_shell(self) -> bool:
        return bool(lib.ocisbx_backend_is_host_shell(self._handle()))

    @property
    def closed(self) -> bool:
        return self._closed

    def sandbox(self) -> Dict[str, Any]:
        """The sandbox as created or connected (a dict)."""
        out = ctypes.c_void_p()
        check(lib.ocisbx_backend_sandbox_json(self._handle(), ctypes.byref(out)))
        return json.loads(take_string(out.value))

    def extend(self, duration: str) -> Optional[str]:
        """Adds lifetime (ISO 8601); returns the new expiry (RFC 3339)."""
        out = ctypes.c_void_p()
        check(lib.ocisbx_backend_extend(self._handle(), arg(duration), ctypes.byref(out)))
        return take_string(out.value)

    @staticmethod
    def _exec_options(o, timeout_ms, cwd, env, secret_env, max_output_bytes):
        if timeout_ms is not None:
            check(lib.ocisbx_exec_options_set_timeout_ms(o, int(timeout_ms)))
        if cwd is not None:
            check(lib.ocisbx_exec_options_set_cwd(o, arg(cwd)))
        for d, secret in ((env, 0), (secret_env, 1)):
            for name, value in (d or {}).items():
                check(lib.ocisbx_exec_options_add_env(o, arg(name), arg(value), secret))
        if max_output_bytes is not None:
            check(lib.ocisbx_exec_options_set_max_output_bytes(o, int(max_output_bytes)))

    def exec(self, command: str, timeout_ms: Optional[int] = None, cwd: Optional[str] = None,
             env: Optional[Dict[str, str]] = None, secret_env: Optional[Dict[str, str]] = None,
             max_output_bytes: Optional[int] = None,
             on_output: Optional[Callable[[bytes], Any]] = None,
             yield_ms: Optional[int] = None) -> Dict[str, Any]:
        """Runs a shell command line in the workspace: {exit_code (None when
        it did not finish), timed_out, truncated, output (bytes),
        total_bytes, total_sha256, duration_ms, command_id, job_id}. With
        yield_ms, a command still running after that long goes on as a
        background job: job_id names it (None when the command ended) and
        output is what it wrote so far."""
        o = ctypes.c_void_p()
        check(lib.ocisbx_exec_options_new(ctypes.byref(o)))
        r = ctypes.c_void_p()
        keep = None
        try:
            self._exec_options(o, timeout_ms, cwd, env, secret_env, max_output_bytes)
            if yield_ms is not None:
                check(lib.ocisbx_exec_options_set_yield_ms(o, int(yield_ms)))
            if on_output is not None:

                def trampoline(data, n, _ud):
                    try:
                        return 1 if on_output(ctypes.string_at(data, n)) else 0
                    except BaseException:
                        traceback.print_exc(file=sys.stderr)
                        return 1  # cancels the command

                keep = WRITE_FN(trampoline)
                check(lib.ocisbx_exec_options_set_on_output(o, keep, None))
            check(lib.ocisbx_backend_exec(self._handle(), arg(command), o, ctypes.byref(r)))
            code = ctypes.c_int(0)
            finished = lib.ocisbx_exec_result_has_exit_code(r, ctypes.byref(code))
            n = ctypes.c_size_t(0)
            p = lib.ocisbx_exec_result_output(r, ctypes.byref(n))
            return {
                "exit_code": code.value if finished == 1 else None,
                "timed_out": bool(lib.ocisbx_exec_result_timed_out(r)),
                "truncated": bool(lib.ocisbx_exec_result_truncated(r)),
                "output": ctypes.string_at(p, n.value) if p else b"",  # owned by the result
                "total_bytes": lib.ocisbx_exec_result_total_bytes(r),
                "total_sha256": text(lib.ocisbx_exec_result_total_sha256(r)),
                "duration_ms": lib.ocisbx_exec_result_duration_ms(r),
                "command_id": text(lib.ocisbx_exec_result_command_id(r)),
                "job_id": text(lib.ocisbx_exec_result_job_id(r)),
            }
        finally:
            lib.ocisbx_exec_result_free(r)
            lib.ocisbx_exec_options_free(o)
            del keep  # the options (and their pointer to the thunk) are gone

    def job_start(self, command: str, timeout_ms: Optional[int] = None, cwd: Optional[str] = None,
                  env: Optional[Dict[str, str]] = None, secret_env: Optional[Dict[str, str]] = None) -> str:
        """Starts a background job; returns its id. Its state lives in the
        workspace, so another process (or Backend) can read or stop it."""
        o = ctypes.c_void_p()
        check(lib.ocisbx_exec_options_new(ctypes.byref(o)))
        try:
            self._exec_options(o, timeout_ms, cwd, env, secret_env, None)
            out = ctypes.c_void_p()
            check(lib.ocisbx_backend_job_start(self._handle(), arg(command), o, ctypes.byref(out)))
            return take_string(out.value) or ""
        finally:
            lib.ocisbx_exec_options_free(o)

    @staticmethod
    def _job_status(s) -> Dict[str, Any]:
        try:
            code = ctypes.c_int(0)
            has = lib.ocisbx_job_status_has_exit_code(s, ctypes.byref(code))
            return {
                "running": bool(lib.ocisbx_job_status_running(s)),
                "exit_code": code.value if has == 1 else None,
                "timed_out": bool(lib.ocisbx_job_status_timed_out(s)),
                "killed": bool(lib.ocisbx_job_status_killed(s)),
                "duration_ms": lib.ocisbx_job_status_duration_ms(s),
                "output_bytes": lib.ocisbx_job_status_output_bytes(s),
            }
        finally:
            lib.ocisbx_job_status_free(s)

    def job_status(self, job_id: str) -> Dict[str, Any]:
        """{running, exit_code (None until it exits), timed_out, killed,
        duration_ms, output_bytes}."""
        s = ctypes.c_void_p()
        check(lib.ocisbx_backend_job_status(self._handle(), arg(job_id), ctypes.byref(s)))
        return self._job_status(s)

    def job_wait(self, job_id: str, wait_ms: int) -> Dict[str, Any]:
        """Waits until the job ends or wait_ms passes; then job_status()."""
        s = ctypes.c_void_p()
        check(lib.ocisbx_backend_job_wait(self._handle(), arg(job_id), int(wait_ms), ctypes.byref(s)))
        return self._job_status(s)

    def job_output(self, job_id: str, offset: int = 0, max_bytes: int = 0) -> Tuple[bytes, int]:
        """(up to max_bytes of its output from offset (negative: the last
        max_bytes), the output's size so far); 0: the backend's cap."""
        p = ctypes.c_void_p()
        n = ctypes.c_size_t(0)
        total = ctypes.c_uint64(0)
        check(lib.ocisbx_backend_job_output(self._handle(), arg(job_id), int(offset), int(max_bytes),
                                            ctypes.byref(p), ctypes.byref(n), ctypes.byref(total)))
        return take_bytes(p.value, n.value), total.value

    def job_stop(self, job_id: str) -> bool:
        """TERM, then KILL after the grace; True when this call ended a
        running job, False when it had already ended."""
        killed = ctypes.c_int(0)
        check(lib.ocisbx_backend_job_stop(self._handle(), arg(job_id), ctypes.byref(killed)))
        return bool(killed.value)

    def detach_jobs(self) -> None:
        """close() then leaves this backend's jobs running (another process
        can read and stop them by id)."""
        check(lib.ocisbx_backend_detach_jobs(self._handle()))

    def read_bytes(self, path: str) -> bytes:
        """The file's exact bytes."""
        p = ctypes.c_void_p()
        n = ctypes.c_size_t(0)
        check(lib.ocisbx_backend_read_bytes(self._handle(), arg(path), ctypes.byref(p), ctypes.byref(n)))
        return take_bytes(p.value, n.value)

    def write(self, path: str, data: Union[bytes, bytearray, memoryview, str]) -> None:
        """Writes bytes (or str, as UTF-8): pointer + length, NULs kept."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
        buf = ctypes.create_string_buffer(data, len(data))
        check(lib.ocisbx_backend_write(self._handle(), arg(path), buf, len(data)))

    def disown(self) -> None:
        """Gives up a created sandbox: close() no longer deletes it."""
        check(lib.ocisbx_backend_disown(self._handle()))

    def close(self) -> None:
        """Ends the backend: a created sandbox is deleted (gone already is
        fine). Idempotent. The C handle stays until this object is freed, so
        a harness still holding the backend sees "closed" errors, never a
        freed pointer."""
        if self._closed or not self._h:
            return
        self._closed = True
        check(lib.ocisbx_backend_close(self._h))

    def _free(self):
        h, self._h = self._h, None
        if h:
            lib.ocisbx_backend_free(h)  # closes first (errors ignored)
        if self._client is not None:
            self._client.free()
            self._client = None

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            self.close()
        except Error:
            if exc_type is None:
                raise
        return False

    def __del__(self):
        try:
            self._free()
        except Exception:
            pass  # at interpreter exit the module may be half gone

    def __repr__(self):
        return "<ocisbx.Backend %s%s>" % (self.label if self._h else "(freed)", " closed" if self._closed else "")
