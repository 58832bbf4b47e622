"""The settings of a backend and of its REST client, from keyword
arguments (each else the environment, else the library's default), and
Client, the REST client a backend uses."""

import ctypes
import sys
import traceback
from typing import Any, Callable, Dict, Optional

from . import _native
from ._errors import check, closed
from ._native import CANCEL_FN, arg, backend_options_p, c_char_p, c_int, c_int64, c_size_t, c_void_p, client_p, lib, text

__all__ = ["Client", "OPTION_NAMES"]

P = ctypes.POINTER
_native.declare({
    # auth.h, http.h, api.h: the REST client the backend uses
    "ocisbx_config_load": (c_int, [c_char_p, c_char_p, P(c_void_p)]),
    "ocisbx_config_get": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_config_free": (None, [c_void_p]),
    "ocisbx_credentials_new": (c_int, [c_char_p, c_void_p, P(c_void_p)]),
    "ocisbx_credentials_free": (None, [c_void_p]),
    "ocisbx_http_options_new": (c_int, [P(c_void_p)]),
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
    "ocisbx_client_options_new": (c_int, [P(c_void_p)]),
    "ocisbx_client_options_free": (None, [c_void_p]),
    "ocisbx_client_options_set_endpoint": (c_int, [c_void_p, c_char_p]),
    "ocisbx_client_options_set_region": (c_int, [c_void_p, c_char_p]),
    "ocisbx_client_options_set_credentials": (c_int, [c_void_p, c_void_p]),
    "ocisbx_client_options_set_http_options": (c_int, [c_void_p, c_void_p]),
    "ocisbx_client_options_set_cancel": (c_int, [c_void_p, CANCEL_FN, c_void_p]),
    "ocisbx_client_new": (c_int, [c_void_p, P(client_p)]),
    # settings.h: the one resolver of the client settings
    "ocisbx_settings_new": (c_int, [P(c_void_p)]),
    "ocisbx_settings_free": (None, [c_void_p]),
    "ocisbx_settings_set": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ocisbx_settings_set_default": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ocisbx_settings_resolve": (c_int, [c_void_p]),
    "ocisbx_settings_get": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_settings_source": (c_int, [c_void_p, c_char_p]),
    "ocisbx_settings_origin": (c_char_p, [c_void_p, c_char_p]),
    "ocisbx_settings_client_new": (c_int, [c_void_p, c_void_p, P(client_p)]),
    "ocisbx_client_free": (None, [client_p]),
    "ocisbx_client_endpoint": (c_char_p, [client_p]),
    "ocisbx_client_last_request_id": (c_char_p, [client_p]),
    "ocisbx_client_set_deadline": (c_int, [client_p, c_int64]),
    "ocisbx_client_deadline_passed": (c_int, [client_p]),
    "ocisbx_time_monotonic_ms": (c_int64, []),
    # backend.h: options
    "ocisbx_backend_options_new": (c_int, [P(backend_options_p)]),
    "ocisbx_backend_options_free": (None, [backend_options_p]),
    "ocisbx_backend_options_set_client": (c_int, [backend_options_p, client_p]),
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
})


class Client:
    """The REST client a backend uses (borrowed: valid while its backend
    lives; Backend.client). The rest of the service is one call away from
    its handle (ocisbx_client_* through ctypes)."""

    def __init__(self, handle: int, owner: Any) -> None:
        self._handle_value = handle
        self._owner = owner  # the backend: keeps the client alive

    @property
    def handle(self) -> int:
        """The ocisbx_client * (for ocisbx_client_* calls of your own)."""
        if getattr(self._owner, "_h", None) is None:
            raise closed("the backend of this client")
        return self._handle_value

    @property
    def endpoint(self) -> Optional[str]:
        return text(lib.ocisbx_client_endpoint(self.handle))

    @property
    def last_request_id(self) -> Optional[str]:
        """The opc-request-id of the client's last request."""
        return text(lib.ocisbx_client_last_request_id(self.handle))

    def set_deadline(self, seconds_from_now: Optional[float]) -> None:
        """A deadline for every call of this client (ocisbx_client_set_deadline):
        a call still blocked then ends with Error ECANCELED. None clears it."""
        at = 0
        if seconds_from_now is not None:
            at = lib.ocisbx_time_monotonic_ms() + max(1, int(seconds_from_now * 1000))
        check(lib.ocisbx_client_set_deadline(self.handle, at))

    @property
    def deadline_passed(self) -> bool:
        return bool(lib.ocisbx_client_deadline_passed(self.handle))

    def __repr__(self) -> str:
        return "<ocisbx.Client %s>" % (self.endpoint if getattr(self._owner, "_h", None) else "(freed)")


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


class _ClientBuilder:
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
            check(lib.ocisbx_settings_new(ctypes.byref(settings)))
            for k in _SETTING_KEYWORDS:
                if kw.get(k) not in (None, ""):
                    check(lib.ocisbx_settings_set(settings, arg(k), arg(kw[k])))
            check(lib.ocisbx_settings_resolve(settings))
            if lib.ocisbx_settings_source(settings, b"region") == _SOURCE_FILE:
                self.config_region = text(lib.ocisbx_settings_get(settings, b"region"))
            check(lib.ocisbx_http_options_new(ctypes.byref(http)))
            for k, fn in _HTTP_INT_OPTIONS.items():
                if kw.get(k) is not None:
                    check(getattr(lib, fn)(http, int(kw[k])))
            if kw.get("retries") is not None:
                check(lib.ocisbx_http_options_set_retries(http, 1 if kw["retries"] else 0))
            if kw.get("user_agent_suffix") is not None:
                check(lib.ocisbx_http_options_set_user_agent_suffix(http, arg(kw["user_agent_suffix"])))
            if kw.get("allow_plain_http"):  # the resolver allows a loopback http:// endpoint by itself
                check(lib.ocisbx_http_options_set_allow_plain_http(http, 1))
            check(lib.ocisbx_client_options_new(ctypes.byref(co)))
            check(lib.ocisbx_client_options_set_http_options(co, http))
            if cancel_cb is not None:
                check(lib.ocisbx_client_options_set_cancel(co, cancel_cb, None))
            check(lib.ocisbx_settings_client_new(settings, co, ctypes.byref(self.handle)))
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
        check(lib.ocisbx_backend_options_new(ctypes.byref(self.handle)))
        try:
            self._apply(kwargs)
            if remote:
                self.client = _ClientBuilder(kwargs, self.cancel_cb)
                check(lib.ocisbx_backend_options_set_client(self.handle, self.client.handle))
                # the label's region: option, environment, endpoint host, config file (the C order;
                # config_region is set only when the region came from the file)
                if self.client.config_region and "generativeai." not in (self.client.endpoint() or ""):
                    check(lib.ocisbx_backend_options_set_region(self.handle, arg(self.client.config_region)))
        except BaseException:
            self.free()
            if self.client is not None:
                self.client.free()
            raise

    def _apply(self, kw):
        o = self.handle
        for k, fn in _STRING_OPTIONS.items():
            if kw.get(k) is not None:
                check(getattr(lib, fn)(o, arg(kw[k])))
        for k, fn in _INT_OPTIONS.items():
            if kw.get(k) is not None:
                check(getattr(lib, fn)(o, int(kw[k])))
        for k, fn in _BOOL_OPTIONS.items():
            if kw.get(k) is not None:
                check(getattr(lib, fn)(o, 1 if kw[k] else 0))
        for k, secret in (("env", 0), ("secret_env", 1)):
            for name, value in (kw.get(k) or {}).items():
                check(lib.ocisbx_backend_options_add_env(o, arg(name), arg(value), secret))
        if kw.get("cancel") is not None:
            self.cancel_cb = _cancel_thunk(kw["cancel"])
            check(lib.ocisbx_backend_options_set_cancel(o, self.cancel_cb, None))

    def free(self):
        if self.handle:
            lib.ocisbx_backend_options_free(self.handle)
            self.handle = ctypes.c_void_p()


