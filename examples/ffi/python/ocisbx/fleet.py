"""ocisbx.Fleet: many sandboxes from one Python thread, over the engine
(include/ocisbx/engine.h, docs/engine.md).

    with ocisbx.Fleet(project_id) as fleet:
        rows = fleet.run_each(100, "echo $OCISBX_FLEET_INDEX")

or step by step: create / exec / close start operations and call their
callback from inside run() (or socket_action() / timeout(), for an outside
event loop such as asyncio: see examples/ffi/python/fleet_asyncio.py).
A callback gets (error, value): error None or an ocisbx.Error, value the
sandbox (create), the result dict (exec), the bytes (read_file) or None
(close, write_file). One thread: the
one that made the Fleet drives it and gets every callback.
"""

import ctypes
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional

from . import _native
from ._client import _Options
from ._errors import Error, check, last_error
from ._native import arg, c_char_p, c_int, c_int64, c_size_t, c_uint64, c_void_p, lib, text

__all__ = ["Fleet", "FleetSandbox", "POLL_IN", "POLL_OUT", "POLL_REMOVE"]

POLL_IN, POLL_OUT, POLL_REMOVE = 1, 2, 4

P = ctypes.POINTER
c_double = ctypes.c_double
engine_p = c_void_p
sandbox_p = c_void_p
CREATE_FN = ctypes.CFUNCTYPE(None, c_int, c_void_p, c_void_p)
EXEC_FN = ctypes.CFUNCTYPE(None, c_int, c_void_p, c_void_p)
CLOSE_FN = ctypes.CFUNCTYPE(None, c_int, c_void_p)
WRITE_FN = ctypes.CFUNCTYPE(None, c_int, c_void_p)
READ_FN = ctypes.CFUNCTYPE(None, c_int, c_void_p, c_size_t, c_void_p)
SOCKET_FN = ctypes.CFUNCTYPE(None, c_int, c_int, c_void_p)
TIMER_FN = ctypes.CFUNCTYPE(None, c_int64, c_void_p)

_native.declare({
    "ocisbx_engine_options_new": (c_int, [P(c_void_p)]),
    "ocisbx_engine_options_free": (None, [c_void_p]),
    "ocisbx_engine_options_set_backend_options": (c_int, [c_void_p, c_void_p]),
    "ocisbx_engine_options_set_project_id": (c_int, [c_void_p, c_char_p]),
    "ocisbx_engine_options_set_max_connections": (c_int, [c_void_p, c_int]),
    "ocisbx_engine_options_set_max_in_flight": (c_int, [c_void_p, c_int]),
    "ocisbx_engine_options_set_max_creates": (c_int, [c_void_p, c_int]),
    "ocisbx_engine_options_set_creates_per_second": (c_int, [c_void_p, c_double]),
    "ocisbx_engine_new": (c_int, [c_void_p, P(engine_p)]),
    "ocisbx_engine_free": (None, [engine_p]),
    "ocisbx_engine_create_sandbox": (c_int, [engine_p, CREATE_FN, c_void_p, P(c_uint64)]),
    "ocisbx_engine_attach_sandbox": (c_int, [engine_p, c_char_p, P(sandbox_p)]),
    "ocisbx_engine_sandbox_id": (c_char_p, [sandbox_p]),
    "ocisbx_engine_sandbox_is_owned": (c_int, [sandbox_p]),
    "ocisbx_engine_exec": (c_int, [engine_p, sandbox_p, c_char_p, c_void_p, EXEC_FN, c_void_p, P(c_uint64)]),
    "ocisbx_engine_close_sandbox": (c_int, [engine_p, sandbox_p, CLOSE_FN, c_void_p, P(c_uint64)]),
    "ocisbx_engine_write_file": (c_int, [engine_p, sandbox_p, c_char_p, c_void_p, c_size_t, WRITE_FN, c_void_p,
                                         P(c_uint64)]),
    "ocisbx_engine_read_file": (c_int, [engine_p, sandbox_p, c_char_p, c_void_p, c_void_p, READ_FN, c_void_p,
                                        P(c_uint64)]),
    "ocisbx_engine_cancel": (c_int, [engine_p, c_uint64]),
    "ocisbx_engine_cancel_all": (None, [engine_p]),
    "ocisbx_engine_pending": (c_size_t, [engine_p]),
    "ocisbx_engine_run": (c_int, [engine_p, c_int64]),
    "ocisbx_engine_set_socket_callback": (c_int, [engine_p, SOCKET_FN, c_void_p]),
    "ocisbx_engine_set_timer_callback": (c_int, [engine_p, TIMER_FN, c_void_p]),
    "ocisbx_engine_socket_action": (c_int, [engine_p, c_int, c_int]),
    "ocisbx_engine_timeout": (c_int, [engine_p]),
    "ocisbx_engine_timeout_ms": (c_int64, [engine_p]),
    "ocisbx_engine_throttled": (c_uint64, [engine_p]),
    # exec options and results (declared by backend.py as well)
    "ocisbx_exec_options_new": (c_int, [P(c_void_p)]),
    "ocisbx_exec_options_free": (None, [c_void_p]),
    "ocisbx_exec_options_set_timeout_ms": (c_int, [c_void_p, c_int64]),
    "ocisbx_exec_options_add_env": (c_int, [c_void_p, c_char_p, c_char_p, c_int]),
    "ocisbx_exec_options_set_max_output_bytes": (c_int, [c_void_p, c_size_t]),
    "ocisbx_exec_result_free": (None, [c_void_p]),
    "ocisbx_exec_result_has_exit_code": (c_int, [c_void_p, P(c_int)]),
    "ocisbx_exec_result_timed_out": (c_int, [c_void_p]),
    "ocisbx_exec_result_truncated": (c_int, [c_void_p]),
    "ocisbx_exec_result_output": (c_void_p, [c_void_p, P(c_size_t)]),
    "ocisbx_exec_result_duration_ms": (c_int64, [c_void_p]),
})

Callback = Callable[[Optional[Error], Any], Any]


class FleetSandbox:
    """A sandbox of a Fleet (valid until its close's callback)."""

    def __init__(self, handle: int):
        self._h = handle

    @property
    def sandbox_id(self) -> Optional[str]:
        return text(lib.ocisbx_engine_sandbox_id(self._h)) if self._h else None

    @property
    def owned(self) -> bool:
        return bool(self._h and lib.ocisbx_engine_sandbox_is_owned(self._h))


def _result(r: int) -> Dict[str, Any]:
    code = ctypes.c_int(0)
    n = ctypes.c_size_t(0)
    p = lib.ocisbx_exec_result_output(r, ctypes.byref(n))
    return {
        "exit_code": code.value if lib.ocisbx_exec_result_has_exit_code(r, ctypes.byref(code)) == 1 else None,
        "timed_out": bool(lib.ocisbx_exec_result_timed_out(r)),
        "truncated": bool(lib.ocisbx_exec_result_truncated(r)),
        "output": ctypes.string_at(p, n.value) if p else b"",
        "duration_ms": int(lib.ocisbx_exec_result_duration_ms(r)),
    }


class Fleet:
    """One engine: options as ocisbx.Backend.create takes them (runtime,
    shape, expiration, env, the client's settings, ...), plus
    max_connections, max_in_flight, max_creates, creates_per_second."""

    def __init__(self, project_id: Optional[str] = None, max_connections: Optional[int] = None,
                 max_in_flight: Optional[int] = None, max_creates: Optional[int] = None,
                 creates_per_second: Optional[float] = None, **options: Any):
        self._h = ctypes.c_void_p()
        self._keep: Dict[int, Any] = {}  # the ctypes thunks of pending operations
        self._next_key = 1
        self._errors: List[BaseException] = []  # raised in callbacks: re-raised by run()
        self._loop_cbs: List[Any] = []
        opts = _Options(options, True)
        self._client = opts.client  # borrowed by the engine: freed after it
        eo = ctypes.c_void_p()
        try:
            check(lib.ocisbx_engine_options_new(ctypes.byref(eo)))
            check(lib.ocisbx_engine_options_set_backend_options(eo, opts.handle))
            if project_id is not None:
                check(lib.ocisbx_engine_options_set_project_id(eo, arg(project_id)))
            for value, fn in ((max_connections, lib.ocisbx_engine_options_set_max_connections),
                              (max_in_flight, lib.ocisbx_engine_options_set_max_in_flight),
                              (max_creates, lib.ocisbx_engine_options_set_max_creates)):
                if value is not None:
                    check(fn(eo, int(value)))
            if creates_per_second is not None:
                check(lib.ocisbx_engine_options_set_creates_per_second(eo, float(creates_per_second)))
            check(lib.ocisbx_engine_new(eo, ctypes.byref(self._h)))
        except BaseException:
            if self._client is not None:
                self._client.free()
            raise
        finally:
            lib.ocisbx_engine_options_free(eo)
            opts.free()

    # ---- lifetime ----
    def free(self) -> None:
        """Frees the engine (sandboxes it created and did not close are deleted)."""
        if self._h:
            lib.ocisbx_engine_free(self._h)
            self._h = ctypes.c_void_p()
            self._keep.clear()
            if self._client is not None:
                self._client.free()
                self._client = None

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass

    def _engine(self):
        if not self._h:
            raise Error("the fleet is freed", errno=-4)
        return self._h

    def _wrap(self, kind, fn: Callback, convert):
        key = self._next_key
        self._next_key += 1

        def thunk(rc, value, _ud=None):
            self._keep.pop(key, None)
            err = last_error(rc) if rc < 0 else None
            try:
                fn(err, convert(value) if err is None and convert is not None else None)
            except BaseException as e:  # never through C: kept for run()
                traceback.print_exc(file=sys.stderr)
                self._errors.append(e)

        if kind is CLOSE_FN or kind is WRITE_FN:
            c = kind(lambda rc, ud: thunk(rc, None))
        elif kind is READ_FN:
            c = kind(lambda rc, data, n, ud: thunk(rc, (data, n)))
        else:
            c = kind(thunk)
        self._keep[key] = c
        return key, c

    # ---- operations ----
    def create(self, on_done: Callback) -> int:
        """Creates a sandbox (waits for RUNNING); on_done(error, FleetSandbox). Returns the op id."""
        key, c = self._wrap(CREATE_FN, on_done, FleetSandbox)
        op = ctypes.c_uint64(0)
        try:
            check(lib.ocisbx_engine_create_sandbox(self._engine(), c, None, ctypes.byref(op)))
        except BaseException:
            self._keep.pop(key, None)
            raise
        return op.value

    def attach(self, sandbox_id: str) -> FleetSandbox:
        """An existing sandbox: exec runs in it, close forgets it."""
        out = ctypes.c_void_p()
        check(lib.ocisbx_engine_attach_sandbox(self._engine(), arg(sandbox_id), ctypes.byref(out)))
        return FleetSandbox(out.value)

    def exec(self, sb: FleetSandbox, command: str, on_done: Callback, timeout_ms: Optional[int] = None,
             env: Optional[Dict[str, str]] = None, max_output_bytes: Optional[int] = None) -> int:
        """Runs a command line in sb; on_done(error, {exit_code, timed_out, truncated, output, duration_ms})."""

        def convert(r):
            try:
                return _result(r)
            finally:
                lib.ocisbx_exec_result_free(r)

        o = ctypes.c_void_p()
        check(lib.ocisbx_exec_options_new(ctypes.byref(o)))
        key, c = self._wrap(EXEC_FN, on_done, convert)
        op = ctypes.c_uint64(0)
        try:
            if timeout_ms is not None:
                check(lib.ocisbx_exec_options_set_timeout_ms(o, int(timeout_ms)))
            if max_output_bytes is not None:
                check(lib.ocisbx_exec_options_set_max_output_bytes(o, int(max_output_bytes)))
            for name, value in (env or {}).items():
                check(lib.ocisbx_exec_options_add_env(o, arg(name), arg(value), 0))
            check(lib.ocisbx_engine_exec(self._engine(), sb._h, arg(command), o, c, None, ctypes.byref(op)))
        except BaseException:
            self._keep.pop(key, None)
            raise
        finally:
            lib.ocisbx_exec_options_free(o)
        return op.value

    def close(self, sb: FleetSandbox, on_done: Callback) -> int:
        """Stops and deletes an owned sandbox (forgets an attached one); on_done(error, None)."""
        key, c = self._wrap(CLOSE_FN, on_done, None)
        op = ctypes.c_uint64(0)
        try:
            check(lib.ocisbx_engine_close_sandbox(self._engine(), sb._h, c, None, ctypes.byref(op)))
        except BaseException:
            self._keep.pop(key, None)
            raise
        sb._h = None
        return op.value

    def write_file(self, sb: FleetSandbox, path: str, data: bytes, on_done: Callback) -> int:
        """Writes data to path in sb, checked and chunked; on_done(error, None). data is kept until then."""
        buf = bytes(data)
        key, c = self._wrap(WRITE_FN, on_done, None)
        self._keep[key] = (c, buf)  # the engine borrows the bytes until the callback
        op = ctypes.c_uint64(0)
        try:
            check(lib.ocisbx_engine_write_file(self._engine(), sb._h, arg(path), buf, len(buf), c, None,
                                               ctypes.byref(op)))
        except BaseException:
            self._keep.pop(key, None)
            raise
        return op.value

    def read_file(self, sb: FleetSandbox, path: str, on_done: Callback) -> int:
        """Reads path of sb, checked; on_done(error, bytes)."""

        def convert(v):
            data, n = v
            try:
                return ctypes.string_at(data, n) if n else b""
            finally:
                lib.ocisbx_free(data)

        key, c = self._wrap(READ_FN, on_done, convert)
        op = ctypes.c_uint64(0)
        try:
            check(lib.ocisbx_engine_read_file(self._engine(), sb._h, arg(path), None, None, c, None,
                                              ctypes.byref(op)))
        except BaseException:
            self._keep.pop(key, None)
            raise
        return op.value

    def cancel(self, op: int) -> None:
        check(lib.ocisbx_engine_cancel(self._engine(), op))

    def cancel_all(self) -> None:
        lib.ocisbx_engine_cancel_all(self._engine())

    @property
    def pending(self) -> int:
        return int(lib.ocisbx_engine_pending(self._engine())) if self._h else 0

    @property
    def throttled(self) -> int:
        """429 answers the engine has had."""
        return int(lib.ocisbx_engine_throttled(self._engine()))

    # ---- driving ----
    def _raise_kept(self) -> None:
        if self._errors:
            e = self._errors.pop(0)
            self._errors.clear()
            raise e

    def run(self, timeout_ms: Optional[int] = None) -> int:
        """Its own loop: until idle (None) or at most timeout_ms. Returns the operations still pending."""
        left = check(lib.ocisbx_engine_run(self._engine(), -1 if timeout_ms is None else int(timeout_ms)))
        self._raise_kept()
        return left

    def set_loop_callbacks(self, on_socket: Callable[[int, int], Any], on_timer: Callable[[int], Any]) -> None:
        """For an outside loop: on_socket(fd, what) (POLL_IN | POLL_OUT, or POLL_REMOVE), on_timer(ms) (-1: none)."""
        s = SOCKET_FN(lambda fd, what, ud: on_socket(fd, what))
        t = TIMER_FN(lambda ms, ud: on_timer(ms))
        self._loop_cbs = [s, t]
        check(lib.ocisbx_engine_set_socket_callback(self._engine(), s, None))
        check(lib.ocisbx_engine_set_timer_callback(self._engine(), t, None))

    def socket_action(self, fd: int, events: int) -> None:
        check(lib.ocisbx_engine_socket_action(self._engine(), fd, events))
        self._raise_kept()

    def timeout(self) -> None:
        check(lib.ocisbx_engine_timeout(self._engine()))
        self._raise_kept()

    # ---- the whole job ----
    def run_each(self, count: int, command: str, timeout_ms: Optional[int] = None,
                 env: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
        """Creates count sandboxes, runs command once in each (OCISBX_FLEET_INDEX set), closes them all;
        rows by index: {index, sandbox_id, result (or None), error (or None)}."""
        rows: List[Dict[str, Any]] = [{"index": i, "sandbox_id": None, "result": None, "error": None}
                                      for i in range(count)]

        def on_close(row):
            return lambda err, _v: row.update(error=row["error"] or err)

        def on_exec(row, sb):
            def done(err, res):
                row.update(result=res, error=err)
                self.close(sb, on_close(row))
            return done

        def on_create(row):
            def done(err, sb):
                if err is not None:
                    row["error"] = err
                    return
                row["sandbox_id"] = sb.sandbox_id
                e = dict(env or {})
                e["OCISBX_FLEET_INDEX"] = str(row["index"])
                self.exec(sb, command, on_exec(row, sb), timeout_ms=timeout_ms, env=e)
            return done

        for row in rows:
            self.create(on_create(row))
        self.run()
        return rows
