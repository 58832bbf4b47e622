"""ocisbx: Python bindings of libocisbx over ctypes (no compiled extension).

    import ocisbx
    with ocisbx.Backend.create(project_id, expiration="PT30M") as b:
        h = ocisbx.Harness(b, gate=lambda call: "allow")
        print(b.sandbox_id, b.label, h.tools, h.prompt)
        print(h.call("exec", {"command": "python3 -V"}))

The library is found through $OCISBX_LIBRARY, else the repository's build/
directory, else the system (see docs/ffi.md). Library failures raise
ocisbx.Error; a tool's own failure is a result {"error": {"code", "message"}}.
"""

import ctypes
import json
import sys
import traceback

from . import _native
from ._native import lib, arg, text, take_string, take_bytes

__all__ = ["Error", "Backend", "Harness", "version", "library_path", "verify_evidence", "set_log"]

library_path = _native.path

# Once per process, before any thread uses the library (common.h); never
# cleaned up: objects may still be freed during interpreter exit.
if lib.ocisbx_global_init() < 0:
    raise ImportError("ocisbx: ocisbx_global_init failed")


def version():
    """The running library's version ("0.1.0")."""
    return text(lib.ocisbx_version())


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

    def __init__(self, message, errno=-1, code=None, status=None, request_id=None, service_code=None, attempts=0):
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.code = code if code is not None else _status_name(errno)
        self.status = status
        self.request_id = request_id
        self.service_code = service_code
        self.attempts = attempts

    def __repr__(self):
        return "ocisbx.Error(%r, code=%r, status=%r, request_id=%r)" % (
            self.message,
            self.code,
            self.status,
            self.request_id,
        )


def _status_name(value):
    name = text(lib.ocisbx_status_name(int(value))) or "OCISBX_UNKNOWN"
    return name[len("OCISBX_"):] if name.startswith("OCISBX_") else name


def _last_error(rc):
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
        message or text(lib.ocisbx_strerror(code)),
        errno=code,
        status=status or None,
        request_id=request_id or None,
        service_code=service_code,
        attempts=attempts,
    )


def _check(rc):
    if rc < 0:
        raise _last_error(rc)
    return rc


def _closed(what):
    return Error("%s is closed" % what, errno=-4)  # OCISBX_ECONFLICT, as the C API says for a closed backend


def verify_evidence(path):
    """Checks an evidence file's chain: the number of records, or Error
    (code "EINTEGRITY", with .bad_line) when the chain is broken."""
    records = ctypes.c_int64(0)
    bad = ctypes.c_int64(0)
    rc = lib.ocisbx_evidence_verify_file(arg(path), ctypes.byref(records), ctypes.byref(bad))
    if rc < 0:
        err = _last_error(rc)
        err.bad_line = bad.value or None
        raise err
    return records.value


_log_keep = None


def set_log(fn, level="info"):
    """Library log lines to fn(level_int, line) at or below level (error,
    warn, info, debug); fn None turns logging off. Global."""
    global _log_keep
    levels = {"error": 0, "warn": 1, "info": 2, "debug": 3}
    max_level = levels[level] if isinstance(level, str) else int(level)
    if fn is None:
        lib.ocisbx_set_log(_native.LOG_FN(), 0, None)
        _log_keep = None
        return

    def trampoline(lvl, line, _ud):
        try:
            fn(lvl, text(line))
        except Exception:  # never let an exception unwind into C
            traceback.print_exc(file=sys.stderr)

    cb = _native.LOG_FN(trampoline)
    lib.ocisbx_set_log(cb, max_level, None)
    _log_keep = cb  # the C side keeps the pointer: keep the thunk alive


# ---- backend --------------------------------------------------------------------------------

_STRING_OPTIONS = {
    "runtime": "ocisbx_backend_options_set_runtime",
    "shape": "ocisbx_backend_options_set_shape",
    "expiration": "ocisbx_backend_options_set_expiration",
    "warmpool": "ocisbx_backend_options_set_warmpool_name",
    "display_name": "ocisbx_backend_options_set_display_name",
    "config_file": "ocisbx_backend_options_set_config_file",
    "profile": "ocisbx_backend_options_set_profile",
    "region": "ocisbx_backend_options_set_region",
    "endpoint": "ocisbx_backend_options_set_endpoint",
}
_INT_OPTIONS = {
    "max_output_bytes": "ocisbx_backend_options_set_max_output_bytes",
    "ready_timeout_ms": "ocisbx_backend_options_set_ready_timeout_ms",
    "poll_interval_ms": "ocisbx_backend_options_set_poll_interval_ms",
}
_BOOL_OPTIONS = {
    "isolation": "ocisbx_backend_options_set_isolation",
    "network": "ocisbx_backend_options_set_network",
}
# Transport settings: the backend options have none, so create/connect
# build the REST client here (as the C backend would) and hand it over.
_HTTP_INT_OPTIONS = {
    "connect_timeout_ms": "ocisbx_http_options_set_connect_timeout_ms",
    "read_timeout_ms": "ocisbx_http_options_set_read_timeout_ms",
    "stream_idle_timeout_ms": "ocisbx_http_options_set_stream_idle_timeout_ms",
    "deadline_ms": "ocisbx_http_options_set_deadline_ms",
    "max_attempts": "ocisbx_http_options_set_max_attempts",
}
_CLIENT_OPTIONS = tuple(_HTTP_INT_OPTIONS) + ("auth", "retries", "ca_bundle", "allow_plain_http",
                                              "user_agent_suffix")
OPTION_NAMES = tuple(sorted(list(_STRING_OPTIONS) + list(_INT_OPTIONS) + list(_BOOL_OPTIONS) +
                            list(_CLIENT_OPTIONS) + ["env", "secret_env", "cancel"]))


# The client settings the keywords give to the library's one resolver
# (ocisbx_settings_*: keyword > environment > config file > default).
_SETTING_KEYWORDS = ("config_file", "profile", "auth", "region", "endpoint", "ca_bundle")
_SOURCE_FILE = 2  # OCISBX_SETTING_FILE


def _cancel_thunk(cancel):
    def trampoline(_ud):
        try:
            return 1 if cancel() else 0
        except BaseException:  # cannot raise through C: cancel the call
            traceback.print_exc(file=sys.stderr)
            return 1

    return _native.CANCEL_FN(trampoline)


class _Client:
    """An ocisbx_client built by the library's settings resolver from the
    keywords (else the environment, the config file's profile, the
    defaults), with the transport settings. Borrowed by the backend: it must
    be freed after the backend."""

    def __init__(self, kw, cancel_cb):
        self.handle = ctypes.c_void_p()
        self.config_region = None
        settings = ctypes.c_void_p()
        http = ctypes.c_void_p()
        co = ctypes.c_void_p()
        try:
            _check(lib.ocisbx_settings_new(ctypes.byref(settings)))
            for k in _SETTING_KEYWORDS:
                if kw.get(k) not in (None, ""):
                    _check(lib.ocisbx_settings_set(settings, arg(k), arg(kw[k])))
            _check(lib.ocisbx_settings_resolve(settings))
            if lib.ocisbx_settings_source(settings, b"region") == _SOURCE_FILE:
                self.config_region = text(lib.ocisbx_settings_get(settings, b"region"))
            _check(lib.ocisbx_http_options_new(ctypes.byref(http)))
            for k, fn in _HTTP_INT_OPTIONS.items():
                if kw.get(k) is not None:
                    _check(getattr(lib, fn)(http, int(kw[k])))
            if kw.get("retries") is not None:
                _check(lib.ocisbx_http_options_set_retries(http, 1 if kw["retries"] else 0))
            if kw.get("user_agent_suffix") is not None:
                _check(lib.ocisbx_http_options_set_user_agent_suffix(http, arg(kw["user_agent_suffix"])))
            if kw.get("allow_plain_http"):  # the resolver allows a loopback http:// endpoint by itself
                _check(lib.ocisbx_http_options_set_allow_plain_http(http, 1))
            _check(lib.ocisbx_client_options_new(ctypes.byref(co)))
            _check(lib.ocisbx_client_options_set_http_options(co, http))
            if cancel_cb is not None:
                _check(lib.ocisbx_client_options_set_cancel(co, cancel_cb, None))
            _check(lib.ocisbx_settings_client_new(settings, co, ctypes.byref(self.handle)))
        finally:
            # the client references the credentials and copied the rest
            lib.ocisbx_client_options_free(co)
            lib.ocisbx_http_options_free(http)
            lib.ocisbx_settings_free(settings)

    def endpoint(self):
        return text(lib.ocisbx_client_endpoint(self.handle))

    def free(self):
        h, self.handle = self.handle, ctypes.c_void_p()
        if h:
            lib.ocisbx_client_free(h)


class _Options:
    """ocisbx_backend_options from keyword arguments; settings not given are
    left to the library (the environment, then its defaults)."""

    def __init__(self, kwargs, remote):
        self.handle = ctypes.c_void_p()
        self.cancel_cb = None
        self.client = None
        unknown = set(kwargs) - set(OPTION_NAMES)
        if unknown:
            raise TypeError("ocisbx: unknown backend option(s) %s (known: %s)" %
                            (", ".join(sorted(unknown)), ", ".join(OPTION_NAMES)))
        _check(lib.ocisbx_backend_options_new(ctypes.byref(self.handle)))
        try:
            self._apply(kwargs)
            if remote:
                self.client = _Client(kwargs, self.cancel_cb)
                _check(lib.ocisbx_backend_options_set_client(self.handle, self.client.handle))
                # the label's region: option, environment, endpoint host, config file (the C order;
                # config_region is set only when the region came from the file)
                if self.client.config_region and "generativeai." not in (self.client.endpoint() or ""):
                    _check(lib.ocisbx_backend_options_set_region(self.handle, arg(self.client.config_region)))
        except BaseException:
            self.free()
            if self.client is not None:
                self.client.free()
            raise

    def _apply(self, kw):
        o = self.handle
        for k, fn in _STRING_OPTIONS.items():
            if kw.get(k) is not None:
                _check(getattr(lib, fn)(o, arg(kw[k])))
        for k, fn in _INT_OPTIONS.items():
            if kw.get(k) is not None:
                _check(getattr(lib, fn)(o, int(kw[k])))
        for k, fn in _BOOL_OPTIONS.items():
            if kw.get(k) is not None:
                _check(getattr(lib, fn)(o, 1 if kw[k] else 0))
        for k, secret in (("env", 0), ("secret_env", 1)):
            for name, value in (kw.get(k) or {}).items():
                _check(lib.ocisbx_backend_options_add_env(o, arg(name), arg(value), secret))
        if kw.get("cancel") is not None:
            self.cancel_cb = _cancel_thunk(kw["cancel"])
            _check(lib.ocisbx_backend_options_set_cancel(o, self.cancel_cb, None))

    def free(self):
        if self.handle:
            lib.ocisbx_backend_options_free(self.handle)
            self.handle = ctypes.c_void_p()


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
            _check(fn(arg(first), opts.handle, ctypes.byref(out)))
        except BaseException:
            if opts.client is not None:
                opts.client.free()
            raise
        finally:
            opts.free()
        return cls(out, opts.cancel_cb, opts.client)

    @classmethod
    def create(cls, project_id=None, **options):
        """Creates a sandbox (project_id None: $OCI_SANDBOX_PROJECT_ID) and
        waits until it runs. The backend owns it: close() deletes it."""
        return cls._open(lib.ocisbx_backend_create, project_id, options, True)

    @classmethod
    def connect(cls, sandbox_id, **options):
        """Attaches to an existing sandbox; close() never deletes it."""
        return cls._open(lib.ocisbx_backend_connect, sandbox_id, options, True)

    @classmethod
    def local(cls, directory, **options):
        """A local directory as the workspace (commands under bubblewrap
        unless isolation=False)."""
        return cls._open(lib.ocisbx_backend_local, directory, options, False)

    def _handle(self):
        if not self._h:
            raise _closed("the backend")
        return self._h

    # Strings owned by the backend handle: copied out, never freed here.
    @property
    def label(self):
        return text(lib.ocisbx_backend_label(self._handle()))

    @property
    def kind(self):
        return text(lib.ocisbx_backend_kind(self._handle()))

    @property
    def sandbox_id(self):
        return text(lib.ocisbx_backend_sandbox_id(self._handle()))

    @property
    def is_host_shell(self):
        return bool(lib.ocisbx_backend_is_host_shell(self._handle()))

    @property
    def closed(self):
        return self._closed

    def sandbox(self):
        """The sandbox as created or connected (a dict)."""
        out = ctypes.c_void_p()
        _check(lib.ocisbx_backend_sandbox_json(self._handle(), ctypes.byref(out)))
        return json.loads(take_string(out.value))

    def extend(self, duration):
        """Adds lifetime (ISO 8601); returns the new expiry (RFC 3339)."""
        out = ctypes.c_void_p()
        _check(lib.ocisbx_backend_extend(self._handle(), arg(duration), ctypes.byref(out)))
        return take_string(out.value)

    def exec(self, command, timeout_ms=None, cwd=None, env=None, secret_env=None, max_output_bytes=None,
             on_output=None):
        """Runs a shell command line in the workspace: {exit_code (None when
        it did not finish), timed_out, truncated, output (bytes),
        total_bytes, total_sha256, duration_ms, command_id}."""
        o = ctypes.c_void_p()
        _check(lib.ocisbx_exec_options_new(ctypes.byref(o)))
        r = ctypes.c_void_p()
        keep = None
        try:
            if timeout_ms is not None:
                _check(lib.ocisbx_exec_options_set_timeout_ms(o, int(timeout_ms)))
            if cwd is not None:
                _check(lib.ocisbx_exec_options_set_cwd(o, arg(cwd)))
            for d, secret in ((env, 0), (secret_env, 1)):
                for name, value in (d or {}).items():
                    _check(lib.ocisbx_exec_options_add_env(o, arg(name), arg(value), secret))
            if max_output_bytes is not None:
                _check(lib.ocisbx_exec_options_set_max_output_bytes(o, int(max_output_bytes)))
            if on_output is not None:

                def trampoline(data, n, _ud):
                    try:
                        return 1 if on_output(ctypes.string_at(data, n)) else 0
                    except BaseException:
                        traceback.print_exc(file=sys.stderr)
                        return 1  # cancels the command

                keep = _native.WRITE_FN(trampoline)
                _check(lib.ocisbx_exec_options_set_on_output(o, keep, None))
            _check(lib.ocisbx_backend_exec(self._handle(), arg(command), o, ctypes.byref(r)))
            code = ctypes.c_int(0)
            finished = lib.ocisbx_exec_result_exit_code(r, ctypes.byref(code))
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
            }
        finally:
            lib.ocisbx_exec_result_free(r)
            lib.ocisbx_exec_options_free(o)
            del keep  # the options (and their pointer to the thunk) are gone

    def read_bytes(self, path):
        """The file's exact bytes."""
        p = ctypes.c_void_p()
        n = ctypes.c_size_t(0)
        _check(lib.ocisbx_backend_read_bytes(self._handle(), arg(path), ctypes.byref(p), ctypes.byref(n)))
        return take_bytes(p.value, n.value)

    def write(self, path, data):
        """Writes bytes (or str, as UTF-8): pointer + length, NULs kept."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
        buf = ctypes.create_string_buffer(data, len(data))
        _check(lib.ocisbx_backend_write(self._handle(), arg(path), buf, len(data)))

    def disown(self):
        """Gives up a created sandbox: close() no longer deletes it."""
        _check(lib.ocisbx_backend_disown(self._handle()))

    def close(self):
        """Ends the backend: a created sandbox is deleted (gone already is
        fine). Idempotent. The C handle stays until this object is freed, so
        a harness still holding the backend sees "closed" errors, never a
        freed pointer."""
        if self._closed or not self._h:
            return
        self._closed = True
        _check(lib.ocisbx_backend_close(self._h))

    def _free(self):
        h, self._h = self._h, None
        if h:
            lib.ocisbx_backend_free(h)  # closes first (errors ignored)
        if self._client is not None:
            self._client.free()
            self._client = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
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


# ---- harness --------------------------------------------------------------------------------

_DECISIONS = {"allow": _native.GATE_ALLOW, "deny": _native.GATE_DENY, "hold": _native.GATE_HOLD}


def _call_dict(tool, label, arguments_json):
    try:
        args = json.loads(text(arguments_json) or "{}")
    except ValueError:
        args = text(arguments_json)
    return {"tool": text(tool), "label": text(label), "arguments": args}


class Harness:
    """Gated tools for a model over one backend (docs/harness.md).

    gate(call) -> "allow" | "deny" | ("deny", reason) | "hold" | ("hold", reason)
        call = {"tool", "label", "arguments"}. An exception, or an answer that
        is none of these, denies the call (the reason says why).
    approve(call) -> bool, for held calls (call also has "reason"). Without
        one, held calls are refused. An exception refuses.
    on_evidence(record) gets each evidence record (a dict).
    evidence: a JSON Lines evidence file; policy_file: a policy YAML file;
    require_person: labels held for a person; deny: {label: reason or None};
    env / secret_env: added to every exec.

    The harness keeps its backend alive; free it with close() or a with
    block (the callbacks are released then)."""

    def __init__(self, backend, gate=None, approve=None, evidence=None, policy_file=None, require_person=(),
                 deny=None, env=None, secret_env=None, on_evidence=None):
        if not isinstance(backend, Backend):
            raise TypeError("ocisbx.Harness needs an ocisbx.Backend")
        self._h = None
        self._backend = backend  # borrowed by the C harness: must outlive it
        self._callbacks = []  # the CFUNCTYPE thunks the C harness points at
        self._pending = None  # a KeyboardInterrupt/SystemExit caught in a callback
        self.gate_errors = []  # exceptions raised by the gate or approve
        o = ctypes.c_void_p()
        _check(lib.ocisbx_harness_options_new(ctypes.byref(o)))
        try:
            for d, secret in ((env, 0), (secret_env, 1)):
                for name, value in (d or {}).items():
                    _check(lib.ocisbx_harness_options_add_env(o, arg(name), arg(value), secret))
            for label in require_person or ():
                _check(lib.ocisbx_harness_options_require_person(o, arg(label)))
            for label, reason in (deny or {}).items():
                _check(lib.ocisbx_harness_options_deny_label(o, arg(label), arg(reason)))
            if policy_file is not None:
                _check(lib.ocisbx_harness_options_set_policy_file(o, arg(policy_file)))
            if evidence is not None:
                _check(lib.ocisbx_harness_options_set_evidence_file(o, arg(evidence)))
            h = ctypes.c_void_p()
            _check(lib.ocisbx_harness_new(backend._handle(), o, ctypes.byref(h)))
            self._h = h
        finally:
            lib.ocisbx_harness_options_free(o)
        if gate is not None:
            self._set_gate(gate)
        if approve is not None:
            self._set_approve(approve)
        if on_evidence is not None:
            self._set_evidence(on_evidence)

    # -- callbacks: each a trampoline that never lets an exception reach C --

    def _caught(self, exc):
        self.gate_errors.append(exc)
        if not isinstance(exc, Exception):
            self._pending = exc  # re-raised once the call is back in Python

    def _set_gate(self, gate):
        def trampoline(tool, label, arguments_json, reply, _ud):
            try:
                answer = gate(_call_dict(tool, label, arguments_json))
                reason = None
                if isinstance(answer, (tuple, list)) and len(answer) == 2:
                    answer, reason = answer
                decision = _DECISIONS.get(answer) if isinstance(answer, str) else None
                if decision is None:
                    decision = _native.GATE_DENY
                    reason = "the gate gave an answer that is not allow, deny or hold: %r" % (answer,)
            except BaseException as e:
                self._caught(e)
                decision = _native.GATE_DENY
                reason = "the gate failed: %s: %s" % (type(e).__name__, e)
            if reason is not None:
                try:
                    lib.ocisbx_gate_reply_set_reason(reply, arg(reason))
                except BaseException:  # a reason with a NUL, out of memory: keep the decision
                    pass
            return decision

        cb = _native.GATE_FN(trampoline)
        _check(lib.ocisbx_harness_set_gate(self._handle(), cb, None))
        self._callbacks.append(cb)

    def _set_approve(self, approve):
        def trampoline(tool, label, arguments_json, reason, _ud):
            try:
                call = _call_dict(tool, label, arguments_json)
                call["reason"] = text(reason)
                return 1 if approve(call) is True else 0
            except BaseException as e:
                self._caught(e)
                return 0

        cb = _native.APPROVAL_FN(trampoline)
        _check(lib.ocisbx_harness_set_approval(self._handle(), cb, None))
        self._callbacks.append(cb)

    def _set_evidence(self, on_evidence):
        def trampoline(record, n, _ud):
            try:
                on_evidence(json.loads(ctypes.string_at(record, n).decode("utf-8", "replace")))
            except BaseException as e:
                self._caught(e)

        cb = _native.EVIDENCE_FN(trampoline)
        _check(lib.ocisbx_harness_set_evidence_callback(self._handle(), cb, None))
        self._callbacks.append(cb)

    def _handle(self):
        if not self._h:
            raise _closed("the harness")
        return self._h

    @property
    def backend(self):
        return self._backend

    def tools_json(self, format=None):
        """The tool list as JSON text: format "ours" (None), "openai", "anthropic"."""
        out = ctypes.c_void_p()
        _check(lib.ocisbx_harness_tools_json(self._handle(), arg(format), ctypes.byref(out)))
        return take_string(out.value)

    @property
    def tools(self):
        """[{name, description, label, parameters}] for every tool."""
        return json.loads(self.tools_json())

    @property
    def prompt(self):
        """Text for a system prompt: the workspace, the tools, the rules."""
        out = ctypes.c_void_p()
        _check(lib.ocisbx_harness_prompt(self._handle(), ctypes.byref(out)))
        return take_string(out.value)

    def call(self, tool, arguments=None):
        """Calls a tool: the result dict; a tool's failure (denied, not
        found, ...) is {"error": {"code", "message"}}, not an exception."""
        if arguments is None:
            arguments = {}
        args = arguments if isinstance(arguments, (str, bytes)) else json.dumps(arguments)
        out = ctypes.c_void_p()
        self._pending = None
        rc = lib.ocisbx_harness_call_json(self._handle(), arg(tool), arg(args), ctypes.byref(out))
        err = _last_error(rc) if rc < 0 else None  # read before any other library call
        pending, self._pending = self._pending, None
        result = take_string(out.value)
        if pending is not None:
            raise pending
        if result is None:  # no result at all: a failure of the call itself
            raise err if err is not None else Error("harness call: no result", errno=-2)
        return json.loads(result)

    def close(self):
        """Frees the C harness, then releases the callbacks. Idempotent."""
        h, self._h = self._h, None
        if h:
            lib.ocisbx_harness_free(h)
        self._callbacks = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
