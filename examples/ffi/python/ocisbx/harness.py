"""ocisbx.Harness: a model's gated tools over a backend
(include/ocisbx/harness.h, docs/harness.md)."""

import ctypes
import json
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from . import _native
from ._errors import Error, check, closed, last_error
from ._native import (APPROVAL_FN, EVIDENCE_FN, GATE_ALLOW, GATE_DENY, GATE_FN, GATE_HOLD, StrArg, arg, backend_p,
                      c_char_p, c_int, c_void_p, gate_reply_p, harness_options_p, harness_p, lib, take_string, text)
from .backend import Backend

__all__ = ["Harness"]

P = ctypes.POINTER
_native.declare({
    "ocisbx_gate_decision_name": (c_char_p, [c_int]),
    "ocisbx_harness_options_new": (c_int, [P(harness_options_p)]),
    "ocisbx_harness_options_free": (None, [harness_options_p]),
    "ocisbx_harness_options_add_env": (c_int, [harness_options_p, c_char_p, c_char_p, c_int]),
    "ocisbx_harness_options_require_person": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_options_deny_label": (c_int, [harness_options_p, c_char_p, c_char_p]),
    "ocisbx_harness_options_set_policy_file": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_options_set_evidence_file": (c_int, [harness_options_p, c_char_p]),
    "ocisbx_harness_new": (c_int, [backend_p, harness_options_p, P(harness_p)]),
    "ocisbx_harness_free": (None, [harness_p]),
    "ocisbx_gate_reply_set_reason": (c_int, [gate_reply_p, c_char_p]),
    "ocisbx_harness_set_gate": (c_int, [harness_p, GATE_FN, c_void_p]),
    "ocisbx_harness_set_approval": (c_int, [harness_p, APPROVAL_FN, c_void_p]),
    "ocisbx_harness_set_evidence_callback": (c_int, [harness_p, EVIDENCE_FN, c_void_p]),
    "ocisbx_harness_tools_json": (c_int, [harness_p, c_char_p, P(c_void_p)]),
    "ocisbx_harness_prompt": (c_int, [harness_p, P(c_void_p)]),
    "ocisbx_harness_call_json": (c_int, [harness_p, c_char_p, c_char_p, P(c_void_p)]),
})

_DECISIONS = {"allow": GATE_ALLOW, "deny": GATE_DENY, "hold": GATE_HOLD}


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

    def __init__(self, backend: Backend, gate: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 approve: Optional[Callable[[Dict[str, Any]], bool]] = None, evidence: StrArg = None,
                 policy_file: StrArg = None, require_person: Iterable[str] = (),
                 deny: Optional[Dict[str, Optional[str]]] = None, env: Optional[Dict[str, str]] = None,
                 secret_env: Optional[Dict[str, str]] = None,
                 on_evidence: Optional[Callable[[Dict[str, Any]], Any]] = None) -> None:
        if not isinstance(backend, Backend):
            raise TypeError("ocisbx.Harness needs an ocisbx.Backend")
        self._h = None
        self._backend = backend  # borrowed by the C harness: must outlive it
        self._callbacks = []  # the CFUNCTYPE thunks the C harness points at
        self._pending = None  # a KeyboardInterrupt/SystemExit caught in a callback
        self.gate_errors = []  # exceptions raised by the gate or approve
        o = ctypes.c_void_p()
        check(lib.ocisbx_harness_options_new(ctypes.byref(o)))
        try:
            for d, secret in ((env, 0), (secret_env, 1)):
                for name, value in (d or {}).items():
                    check(lib.ocisbx_harness_options_add_env(o, arg(name), arg(value), secret))
            for label in require_person or ():
                check(lib.ocisbx_harness_options_require_person(o, arg(label)))
            for label, reason in (deny or {}).items():
                check(lib.ocisbx_harness_options_deny_label(o, arg(label), arg(reason)))
            if policy_file is not None:
                check(lib.ocisbx_harness_options_set_policy_file(o, arg(policy_file)))
            if evidence is not None:
                check(lib.ocisbx_harness_options_set_evidence_file(o, arg(evidence)))
            h = ctypes.c_void_p()
            check(lib.ocisbx_harness_new(backend._handle(), o, ctypes.byref(h)))
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
                    decision = GATE_DENY
                    reason = "the gate gave an answer that is not allow, deny or hold: %r" % (answer,)
            except BaseException as e:
                self._caught(e)
                decision = GATE_DENY
                reason = "the gate failed: %s: %s" % (type(e).__name__, e)
            if reason is not None:
                try:
                    lib.ocisbx_gate_reply_set_reason(reply, arg(reason))
                except BaseException:  # a reason with a NUL, out of memory: keep the decision
                    pass
            return decision

        cb = GATE_FN(trampoline)
        check(lib.ocisbx_harness_set_gate(self._handle(), cb, None))
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

        cb = APPROVAL_FN(trampoline)
        check(lib.ocisbx_harness_set_approval(self._handle(), cb, None))
        self._callbacks.append(cb)

    def _set_evidence(self, on_evidence):
        def trampoline(record, n, _ud):
            try:
                on_evidence(json.loads(ctypes.string_at(record, n).decode("utf-8", "replace")))
            except BaseException as e:
                self._caught(e)

        cb = EVIDENCE_FN(trampoline)
        check(lib.ocisbx_harness_set_evidence_callback(self._handle(), cb, None))
        self._callbacks.append(cb)

    def _handle(self):
        if not self._h:
            raise closed("the harness")
        return self._h

    @property
    def backend(self) -> Backend:
        return self._backend

    def tools_json(self, format: Optional[str] = None) -> str:
        """The tool list as JSON text: format "ours" (None), "openai", "anthropic"."""
        out = ctypes.c_void_p()
        check(lib.ocisbx_harness_tools_json(self._handle(), arg(format), ctypes.byref(out)))
        return take_string(out.value) or ""

    @property
    def tools(self) -> List[Dict[str, Any]]:
        """[{name, description, label, parameters}] for every tool."""
        return json.loads(self.tools_json())

    @property
    def prompt(self) -> str:
        """Text for a system prompt: the workspace, the tools, the rules."""
        out = ctypes.c_void_p()
        check(lib.ocisbx_harness_prompt(self._handle(), ctypes.byref(out)))
        return take_string(out.value) or ""

    def call(self, tool: str, arguments: Union[Dict[str, Any], str, bytes, None] = None) -> Dict[str, Any]:
        """Calls a tool: the result dict; a tool's failure (denied, not
        found, ...) is {"error": {"code", "message"}}, not an exception."""
        if arguments is None:
            arguments = {}
        args = arguments if isinstance(arguments, (str, bytes)) else json.dumps(arguments)
        out = ctypes.c_void_p()
        self._pending = None
        rc = lib.ocisbx_harness_call_json(self._handle(), arg(tool), arg(args), ctypes.byref(out))
        err = last_error(rc) if rc < 0 else None  # read before any other library call
        pending, self._pending = self._pending, None
        result = take_string(out.value)
        if pending is not None:
            raise pending
        if result is None:  # no result at all: a failure of the call itself
            raise err if err is not None else Error("harness call: no result", errno=-2)
        return json.loads(result)

    # ---- typed shortcuts for the tools of docs/harness.md (each is call()) ----
    def apply_patch(self, patch: str) -> Dict[str, Any]:
        """apply_patch: {files: [{path, action, moved_to}], diff}, or {error}.
        Atomic: on any error no file changed."""
        return self.call("apply_patch", {"patch": patch})

    def edit(self, path: str, old_string: Optional[str] = None, new_string: Optional[str] = None, *,
             edits: Optional[Iterable[Dict[str, Any]]] = None, replace_all: bool = False, dry_run: bool = False,
             expected_sha256: Optional[str] = None) -> Dict[str, Any]:
        """edit: one change (old_string, new_string) or several (edits:
        [{old_string, new_string, replace_all?}], in order, all or none);
        dry_run writes nothing. {replacements, sha256, dry_run, diff}."""
        a: Dict[str, Any] = {"path": path, "dry_run": dry_run}
        if edits is not None:
            a["edits"] = list(edits)
        else:
            a.update(old_string=old_string, new_string=new_string, replace_all=replace_all)
        if expected_sha256 is not None:
            a["expected_sha256"] = expected_sha256
        return self.call("edit", a)

    def search(self, pattern: str, **options: Any) -> Dict[str, Any]:
        """search with its options (path, glob, literal, ignore_case,
        output_mode "content"|"files_with_matches"|"count", context,
        head_limit, offset)."""
        return self.call("search", dict(options, pattern=pattern))

    def exec(self, command: str, **options: Any) -> Dict[str, Any]:
        """exec with its options (timeout, cwd, env, background, yield_ms):
        with yield_ms a command still running comes back as
        {job_id, running: True, output, truncated}."""
        return self.call("exec", dict(options, command=command))

    def job_wait(self, job_id: str, wait_ms: int = 30000, offset: int = 0) -> Dict[str, Any]:
        """job action "wait": {running, exit_code, timed_out, output,
        next_offset}, the output since this harness last read the job's."""
        return self.call("job", {"job_id": job_id, "action": "wait", "wait_ms": wait_ms, "offset": offset})

    def close(self) -> None:
        """Frees the C harness, then releases the callbacks. Idempotent."""
        h, self._h = self._h, None
        if h:
            lib.ocisbx_harness_free(h)
        self._callbacks = []

    def __enter__(self) -> "Harness":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
