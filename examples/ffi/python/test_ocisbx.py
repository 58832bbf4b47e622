"""Tests of the ctypes package ocisbx, against a local directory and against
a test tenancy (ocisbx-emulator).

    PYTHONPATH=examples/ffi/python OCISBX_LIBRARY=build/libocisbx.so \
        python3 -m unittest test_ocisbx.LocalTests
    bash examples/run-with-tenancy.sh build env OCISBX_REQUIRE_TENANCY=1 \
        python3 -m unittest test_ocisbx.EmulatorTests

The emulator tests read the tenancy from the environment run-with-tenancy.sh
exports (OCI_CONFIG_FILE, OCI_SANDBOX_ENDPOINT, OCI_SANDBOX_PROJECT_ID,
OCI_SANDBOX_REGION). Without it they are skipped, unless
OCISBX_REQUIRE_TENANCY=1 (as CTest runs them): then they fail.
"""

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import ocisbx

TOOLS = {"read", "write", "edit", "search", "glob", "ls", "exec", "job", "apply_patch"}


def have_tenancy():
    return bool(os.environ.get("OCI_SANDBOX_ENDPOINT") and os.environ.get("OCI_SANDBOX_PROJECT_ID"))


def tenancy_or_skip(case):
    if have_tenancy():
        return
    if os.environ.get("OCISBX_REQUIRE_TENANCY") == "1":
        case.fail("OCISBX_REQUIRE_TENANCY=1 but no tenancy in the environment (OCI_SANDBOX_ENDPOINT, "
                  "OCI_SANDBOX_PROJECT_ID): run under examples/run-with-tenancy.sh")
    case.skipTest("no test tenancy in the environment")


class HarnessContract:
    """The same checks on every backend: make_backend() gives an open one."""

    def make_backend(self):
        raise NotImplementedError

    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="ocisbx-pytest-")
        self.addCleanup(shutil.rmtree, self.scratch, True)  # also when make_backend fails
        self.b = self.make_backend()

    def tearDown(self):
        self.b.close()

    def exists(self, path):
        """Whether a workspace path exists, asked through an allowing harness."""
        with ocisbx.Harness(self.b, gate=lambda call: "allow") as h:
            r = h.call("exec", {"command": "test -e %s && echo yes || echo no" % path})
        self.assertEqual(r["exit_code"], 0, r)
        return r["output"].strip() == "yes"

    def test_tools_and_prompt(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "allow")
        tools = h.tools
        self.assertIsInstance(tools, list)
        self.assertEqual(len(tools), 9)
        self.assertEqual({t["name"] for t in tools}, TOOLS)
        for t in tools:
            self.assertIsInstance(t, dict)
            self.assertTrue(t["label"].startswith("workspace."), t)
            self.assertEqual(t["parameters"]["type"], "object")
        openai = json.loads(h.tools_json("openai"))
        self.assertEqual({t["function"]["name"] for t in openai}, TOOLS)
        anthropic = json.loads(h.tools_json("anthropic"))
        self.assertIn("input_schema", anthropic[0])
        with self.assertRaises(ocisbx.Error) as cm:
            h.tools_json("no-such-format")
        self.assertEqual(cm.exception.code, "EINVAL")
        prompt = h.prompt
        self.assertIsInstance(prompt, str)
        self.assertIn("/workspace", prompt)
        h.close()

    def test_exec_python(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "allow")
        r = h.call("exec", {"command": "python3 -V"})
        self.assertEqual(r["exit_code"], 0, r)
        self.assertIn("Python", r["output"])
        self.assertFalse(r["timed_out"])
        r = h.call("exec", {"command": "echo out; echo err >&2; exit 3"})
        self.assertEqual(r["exit_code"], 3)
        self.assertEqual(r["output"], "out\nerr\n")

    def test_write_read_round_trip(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "allow")
        w = h.call("write", {"path": "dir/hello.txt", "content": "héllo\nworld\n"})
        self.assertNotIn("error", w)
        self.assertEqual(w["path"], "/workspace/dir/hello.txt")
        self.assertEqual(len(w["sha256"]), 64)
        r = h.call("read", {"path": "/workspace/dir/hello.txt"})
        self.assertEqual(r["content"], "     1\théllo\n     2\tworld\n")
        self.assertEqual(r["total_lines"], 2)
        # bytes through the backend: pointer + length, NUL bytes kept
        data = b"\x00\x01binary\xff\x00end"
        self.b.write("raw.bin", data)
        self.assertEqual(self.b.read_bytes("/workspace/raw.bin"), data)
        e = self.b.exec("wc -c < raw.bin")
        self.assertEqual(e["exit_code"], 0)
        self.assertEqual(e["output"].strip(), str(len(data)).encode())

    def test_exec_yield_and_jobs(self):
        # a command that ends before the yield: the usual result, no job
        e = self.b.exec("echo quick", yield_ms=20000)
        self.assertEqual(e["exit_code"], 0)
        self.assertIsNone(e["job_id"])
        # one still running after the yield goes on as a job
        e = self.b.exec("echo started; sleep 1.5; echo done", yield_ms=300)
        self.assertIsNotNone(e["job_id"])
        self.assertIsNone(e["exit_code"])
        self.assertIn(b"started", e["output"])
        st = self.b.job_wait(e["job_id"], 30000)
        self.assertFalse(st["running"])
        self.assertEqual(st["exit_code"], 0)
        out, total = self.b.job_output(e["job_id"])
        self.assertEqual(out, b"started\ndone\n")
        self.assertEqual(total, len(out))
        self.assertFalse(self.b.job_stop(e["job_id"]))  # already ended
        # a started job, waited for a short while, then stopped
        jid = self.b.job_start("sleep 60")
        st = self.b.job_wait(jid, 200)
        self.assertTrue(st["running"])
        self.assertTrue(self.b.job_stop(jid))
        st = self.b.job_status(jid)
        self.assertFalse(st["running"])
        self.assertTrue(st["killed"])
        self.assertIsNone(st["exit_code"])
        with self.assertRaises(ocisbx.Error):
            self.b.job_status("no-such-job")

    def test_apply_patch_edits_search_yield(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "allow")
        h.call("write", {"path": "pp/a.txt", "content": "one\ntwo\n"})
        r = h.apply_patch("*** Begin Patch\n*** Update File: pp/a.txt\n@@\n one\n-two\n+2\n"
                          "*** Add File: pp/b.txt\n+bee\n*** End Patch\n")
        self.assertNotIn("error", r)
        self.assertEqual([(f["path"], f["action"]) for f in r["files"]],
                         [("/workspace/pp/a.txt", "update"), ("/workspace/pp/b.txt", "add")])
        self.assertIn("+2\n", r["diff"])
        # atomic: the second file's hunk fails, the first stays as it was
        r = h.apply_patch("*** Begin Patch\n*** Update File: pp/a.txt\n@@\n-one\n+1\n"
                          "*** Update File: pp/b.txt\n@@\n-nope\n+x\n*** End Patch\n")
        self.assertEqual(r["error"]["code"], "no_match")
        self.assertEqual(self.b.read_bytes("pp/a.txt"), b"one\n2\n")
        r = h.apply_patch("*** Begin Patch\n*** Add File: ../out.txt\n+x\n*** End Patch\n")
        self.assertEqual(r["error"]["code"], "outside_workspace")
        r = h.edit("pp/a.txt", edits=[{"old_string": "one", "new_string": "1"},
                                      {"old_string": "1\n2", "new_string": "1\n22"}], dry_run=True)
        self.assertTrue(r["dry_run"], r)
        self.assertIn("+22\n", r["diff"])
        self.assertEqual(self.b.read_bytes("pp/a.txt"), b"one\n2\n")
        r = h.edit("pp/a.txt", edits=[{"old_string": "one", "new_string": "1"},
                                      {"old_string": "zzz", "new_string": "x"}])
        self.assertEqual(r["error"]["code"], "no_match")
        self.assertIn("edits[1]", r["error"]["message"])
        r = h.search("e", path="pp", output_mode="files_with_matches")
        self.assertEqual(r["files"], ["/workspace/pp/a.txt", "/workspace/pp/b.txt"])
        r = h.search("e", path="pp", output_mode="count", head_limit=1)
        self.assertEqual(r["counts"], [{"path": "/workspace/pp/a.txt", "count": 1}])
        self.assertTrue(r["truncated"])
        r = h.exec("while [ ! -e pp/go ]; do sleep 0.1; done; echo done", yield_ms=200)
        self.assertTrue(r["running"], r)
        self.b.write("pp/go", b"")
        w = h.job_wait(r["job_id"], wait_ms=120000)
        self.assertFalse(w["running"], w)
        self.assertEqual(w["exit_code"], 0)
        self.assertEqual(w["output"], "done\n")
        h.close()

    def test_tool_error_is_a_result(self):
        h = ocisbx.Harness(self.b)
        r = h.call("read", {"path": "missing.txt"})
        self.assertEqual(r["error"]["code"], "not_found")
        r = h.call("read", {"path": "/etc/passwd"})
        self.assertEqual(r["error"]["code"], "outside_workspace")
        r = h.call("no_such_tool", {})
        self.assertEqual(r["error"]["code"], "invalid_arguments")
        with self.assertRaises(ocisbx.Error) as cm:
            self.b.read_bytes("missing.txt")
        self.assertEqual(cm.exception.code, "ENOTFOUND")
        self.assertEqual(cm.exception.errno, -3)
        with self.assertRaises(ocisbx.Error) as cm:
            self.b.read_bytes("/etc/passwd")
        self.assertEqual(cm.exception.code, "EFORBIDDEN")
        self.assertIsNone(cm.exception.status)

    def test_gate_sees_the_call(self):
        seen = []

        def gate(call):
            seen.append(call)
            return "allow"

        h = ocisbx.Harness(self.b, gate=gate)
        h.call("exec", {"command": "true"})
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0]["tool"], "exec")
        self.assertEqual(seen[0]["label"], "workspace.exec")
        self.assertEqual(seen[0]["arguments"]["command"], "true")

    def test_gate_deny(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "deny")
        r = h.call("exec", {"command": "touch denied-marker"})
        self.assertEqual(r["error"]["code"], "denied", r)
        self.assertFalse(self.exists("denied-marker"))
        r = h.call("write", {"path": "denied.txt", "content": "x"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertFalse(self.exists("denied.txt"))

    def test_gate_deny_with_reason(self):
        h = ocisbx.Harness(self.b, gate=lambda call: ("deny", "no commands on Fridays"))
        r = h.call("exec", {"command": "touch reason-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertIn("no commands on Fridays", r["error"]["message"])
        self.assertFalse(self.exists("reason-marker"))

    def test_gate_raising_denies(self):
        def gate(call):
            raise RuntimeError("gate exploded")

        h = ocisbx.Harness(self.b, gate=gate)
        r = h.call("exec", {"command": "touch raise-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertIn("gate exploded", r["error"]["message"])
        self.assertEqual(len(h.gate_errors), 1)
        self.assertIsInstance(h.gate_errors[0], RuntimeError)
        self.assertFalse(self.exists("raise-marker"))

    def test_gate_bad_answer_denies(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "maybe")
        r = h.call("exec", {"command": "touch bad-answer-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertIn("maybe", r["error"]["message"])
        self.assertFalse(self.exists("bad-answer-marker"))

    def test_hold_and_approve(self):
        # without approve: refused
        h = ocisbx.Harness(self.b, gate=lambda call: "hold")
        r = h.call("exec", {"command": "touch held-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertFalse(self.exists("held-marker"))
        asked = []

        def approve(call):
            asked.append(call)
            return "yes" in call["arguments"]["command"]

        h = ocisbx.Harness(self.b, gate=lambda call: ("hold", "a person decides"), approve=approve)
        r = h.call("exec", {"command": "echo yes > approved-marker"})
        self.assertEqual(r.get("exit_code"), 0, r)
        self.assertTrue(self.exists("approved-marker"))
        r = h.call("exec", {"command": "touch refused-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertFalse(self.exists("refused-marker"))
        self.assertEqual(len(asked), 2)
        self.assertEqual(asked[0]["reason"], "a person decides")
        self.assertEqual(asked[0]["tool"], "exec")

        def approve_raises(call):
            raise ValueError("approver exploded")

        h = ocisbx.Harness(self.b, gate=lambda call: "hold", approve=approve_raises)
        r = h.call("exec", {"command": "touch approve-raise-marker"})
        self.assertEqual(r["error"]["code"], "denied")
        self.assertIsInstance(h.gate_errors[0], ValueError)
        self.assertFalse(self.exists("approve-raise-marker"))

    def test_callbacks_outlive_their_names(self):
        # the lambda's only reference is the harness: the thunk must survive gc
        h = ocisbx.Harness(self.b, gate=lambda call: ("deny", "kept alive"))
        gc.collect()
        for _ in range(3):
            r = h.call("ls", {"path": "/workspace"})
            self.assertIn("kept alive", r["error"]["message"])
            gc.collect()

    def test_evidence(self):
        path = os.path.join(self.scratch, "evidence.jsonl")
        records = []
        h = ocisbx.Harness(self.b, gate=lambda call: "deny" if call["tool"] == "write" else "allow",
                           evidence=path, on_evidence=records.append)
        h.call("exec", {"command": "echo one"})
        h.call("write", {"path": "e.txt", "content": "x"})
        h.close()
        self.assertEqual([r["decision"] for r in records], ["allow", "deny"])
        self.assertEqual(records[0]["backend"], self.b.label)
        self.assertEqual(ocisbx.verify_evidence(path), 2)
        with open(path, "rb") as f:
            text = f.read()
        with open(path, "wb") as f:
            f.write(text.replace(b'"decision":"allow"', b'"decision":"alloW"', 1))
        # the first line changed: the second line's prev_sha256 no longer matches
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.verify_evidence(path)
        self.assertEqual(cm.exception.code, "EINTEGRITY")
        self.assertEqual(cm.exception.bad_line, 2)

    def test_torn_evidence_refuses_the_call(self):
        path = os.path.join(self.scratch, "torn.jsonl")
        with open(path, "w") as f:
            f.write('{"partial')
        with ocisbx.Harness(self.b, evidence=path) as h:
            r = h.call("exec", {"command": "touch torn-marker"})
        self.assertEqual(r["error"]["code"], "evidence_error")
        self.assertFalse(self.exists("torn-marker"))

    def test_secret_in_a_path_and_control_characters(self):
        asked = []
        h = ocisbx.Harness(self.b, secret_env={"PY_TOKEN": "tok-in-path-77"},
                           gate=lambda call: "hold" if call["tool"] == "exec" else "allow",
                           approve=lambda call: asked.append(call) or False)
        r = h.call("write", {"path": "d-tok-in-path-77/f.txt", "content": "x"})
        self.assertEqual(r["path"], "/workspace/d-[REDACTED]/f.txt")
        r = h.call("glob", {"pattern": "**/f.txt"})
        self.assertNotIn("tok-in-path-77", json.dumps(r))
        h.call("exec", {"command": "echo \u009b2J"})
        h.close()
        self.assertEqual(asked[0]["arguments"]["command"], "echo \u009b2J")  # decoded: the same text

    def test_evidence_head(self):
        path = os.path.join(self.scratch, "head.jsonl")
        h = ocisbx.Harness(self.b, gate=lambda call: "allow", evidence=path)
        h.call("exec", {"command": "echo one"})
        h.call("exec", {"command": "echo two"})
        h.close()
        head = ocisbx.evidence_head(path)
        self.assertRegex(head, "^[0-9a-f]{64}$")
        self.assertEqual(ocisbx.verify_evidence(path, head=head), 2)
        self.assertEqual(ocisbx.verify_evidence(path, head=head.upper()), 2)
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        with open(path, "wb") as f:  # the last record removed: the chain alone cannot see it
            f.writelines(lines[:-1])
        self.assertEqual(ocisbx.verify_evidence(path), 1)
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.verify_evidence(path, head=head)
        self.assertEqual(cm.exception.code, "EINTEGRITY")
        self.assertIn(head, str(cm.exception))

    def test_deny_label_and_secret_env(self):
        h = ocisbx.Harness(self.b, deny={"workspace.write": "read-only here"},
                           secret_env={"PY_SECRET": "s3cr3t-value-91"})
        r = h.call("write", {"path": "w.txt", "content": "x"})
        self.assertIn("read-only here", r["error"]["message"])
        r = h.call("exec", {"command": 'test "$PY_SECRET" = s3cr3t-value-91 && echo reached $PY_SECRET'})
        self.assertIn("reached", r["output"])
        self.assertNotIn("s3cr3t-value-91", r["output"])

    def test_closed_harness_raises(self):
        h = ocisbx.Harness(self.b)
        h.close()
        h.close()  # idempotent
        with self.assertRaises(ocisbx.Error):
            h.call("ls", {"path": "/workspace"})

    def test_closed_backend_keeps_harness_safe(self):
        h = ocisbx.Harness(self.b, gate=lambda call: "allow")
        self.b.close()
        # the C handle is still alive (the harness holds the backend): an error, not a crash
        r = h.call("exec", {"command": "true"})
        self.assertIn("error", r)
        with self.assertRaises(ocisbx.Error) as cm:
            self.b.exec("true")
        self.assertEqual(cm.exception.code, "ECONFLICT")


class LocalTests(HarnessContract, unittest.TestCase):
    def make_backend(self):
        self.workspace = tempfile.mkdtemp(prefix="ocisbx-pyws-")
        self.addCleanup(shutil.rmtree, self.workspace, True)
        # as root the directory stays root's: its commands run as root in a
        # user namespace, with the runner's host-root rules (src/sys/proc.h)
        return ocisbx.Backend.local(self.workspace)

    def test_local_backend(self):
        self.assertTrue(self.b.label.startswith("local:"), self.b.label)
        self.assertIsNone(self.b.sandbox_id)
        self.assertEqual(self.b.kind, "local")
        self.assertFalse(self.b.is_host_shell)
        h = ocisbx.Harness(self.b, gate=lambda call: "deny")
        h.call("write", {"path": "host-marker", "content": "x"})
        self.assertFalse(os.path.exists(os.path.join(self.workspace, "host-marker")))
        ocisbx.Harness(self.b).call("write", {"path": "host-marker", "content": "x"})
        self.assertTrue(os.path.exists(os.path.join(self.workspace, "host-marker")))
        with self.assertRaises(ocisbx.Error) as cm:
            self.b.sandbox()
        self.assertEqual(cm.exception.code, "EUNSUPPORTED")

    def test_missing_directory(self):
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.Backend.local(os.path.join(self.scratch, "does-not-exist"))
        self.assertTrue(str(cm.exception))
        self.assertLess(cm.exception.errno, 0)

    def test_library_lookup(self):
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, OCISBX_LIBRARY=os.path.join(self.scratch, "no-such-libocisbx.so"))
        p = subprocess.run([sys.executable, "-c", "import ocisbx"], cwd=here, env=env,
                           capture_output=True, text=True)
        # $OCISBX_LIBRARY set: it alone is tried, and the failure says so
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("OCISBX_LIBRARY", p.stderr)
        self.assertIn("no-such-libocisbx.so", p.stderr)
        # unset: next to the package, the build tree, then the system's loader by the versioned name
        saved = os.environ.pop("OCISBX_LIBRARY", None)
        try:
            cands = ocisbx._native.candidates()
        finally:
            if saved is not None:
                os.environ["OCISBX_LIBRARY"] = saved
        self.assertEqual(cands[-1], ocisbx.SONAME)  # the system's, last
        self.assertRegex(ocisbx.SONAME, r"^libocisbx\.so\.0\.[0-9]+$")
        root = os.path.realpath(os.path.join(here, "..", "..", ".."))  # examples/ffi/python -> the repository
        in_tree = os.path.join(root, "build", "libocisbx.so")
        if os.path.exists(in_tree):
            self.assertIn(in_tree, cands)  # the build tree before the system
        for c in cands[:-1]:
            if c.startswith(root + os.sep):
                self.assertIn(os.path.dirname(c), (os.path.join(root, "build"), os.path.join(here, "ocisbx"), here))

    def test_package_surface(self):
        for name in ocisbx.__all__:
            self.assertTrue(hasattr(ocisbx, name), name)
        self.assertEqual(ocisbx.__version__, ocisbx.version())  # the package is the library's version
        f = ocisbx.features()
        self.assertTrue(f & ocisbx.FEATURE_LOCAL_BACKEND)
        self.assertTrue(f & ocisbx.FEATURE_YAML_POLICY)  # the tests' library reads policy files
        import typing
        hints = typing.get_type_hints(ocisbx.Backend.exec)
        self.assertIn("return", hints)
        self.assertIn("timeout_ms", hints)
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(ocisbx.__file__), "py.typed")))

    def test_set_error(self):
        self.assertEqual(ocisbx.set_error("EDENIED", "no one could be asked"), -8)
        e = ocisbx._errors.last_error(-1)
        self.assertEqual(e.code, "EDENIED")
        self.assertEqual(str(e), "no one could be asked")
        self.assertEqual(ocisbx.set_error(e.errno), e.errno)  # by value; message NULL: the code's text
        self.assertEqual(ocisbx._errors.last_error(-1).code, "EDENIED")
        with self.assertRaises(ValueError):
            ocisbx.set_error("ENOSUCHCODE")

    def test_local_has_no_client(self):
        self.assertIsNone(self.b.client)

    def test_unknown_option(self):
        with self.assertRaises(TypeError):
            ocisbx.Backend.local(self.workspace, colour="blue")


class EmulatorTests(HarnessContract, unittest.TestCase):
    def setUp(self):
        tenancy_or_skip(self)
        super().setUp()

    def make_backend(self):
        return ocisbx.Backend.create(os.environ["OCI_SANDBOX_PROJECT_ID"], expiration="PT30M",
                                     poll_interval_ms=20)

    def test_create(self):
        sid = self.b.sandbox_id
        self.assertIsInstance(sid, str)
        self.assertTrue(sid)
        self.assertTrue(self.b.label.startswith("oci-sandbox:"), self.b.label)
        self.assertTrue(self.b.label.endswith("/" + sid), self.b.label)
        self.assertEqual(self.b.kind, "oci-sandbox")
        s = self.b.sandbox()
        self.assertEqual(s["id"], sid)
        self.assertEqual(s["lifecycleState"], "RUNNING")

    def test_with_block_deletes(self):
        with ocisbx.Backend.create(expiration="PT30M", poll_interval_ms=20) as b:  # project from the env
            sid = b.sandbox_id
            with ocisbx.Backend.connect(sid) as other:  # connected: leaving it never deletes
                self.assertEqual(other.sandbox_id, sid)
            again = ocisbx.Backend.connect(sid)
            self.assertEqual(again.sandbox()["lifecycleState"], "RUNNING")
            again.close()
            h = ocisbx.Harness(b, gate=lambda call: "allow")
            self.assertEqual(h.call("exec", {"command": "python3 -V"})["exit_code"], 0)
        self.assertTrue(b.closed)
        with self.assertRaises(ocisbx.Error) as cm:  # connect asks nothing; the first operation shows it
            ocisbx.Backend.connect(sid).sandbox()
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(cm.exception.code, "ENOTFOUND")

    def test_dropped_backend_deletes(self):
        b = ocisbx.Backend.create(expiration="PT30M", poll_interval_ms=20)
        sid = b.sandbox_id
        del b  # no close(): __del__ frees, and ocisbx_backend_free closes (deletes) first
        gc.collect()
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.Backend.connect(sid).sandbox()
        self.assertEqual(cm.exception.status, 404)

    def test_backend_client_and_deadline(self):
        c = self.b.client
        self.assertIsInstance(c, ocisbx.Client)
        self.assertEqual(c.endpoint, os.environ["OCI_SANDBOX_ENDPOINT"].rstrip("/"))
        self.b.sandbox()
        self.b.exec("true")
        self.assertTrue(c.last_request_id)
        self.assertFalse(c.deadline_passed)
        c.set_deadline(0.001)  # every call of the client ends at the deadline
        import time
        time.sleep(0.01)
        with self.assertRaises(ocisbx.Error) as cm:
            self.b.extend("PT1M")  # a call through the backend's client
        self.assertEqual(cm.exception.code, "ECANCELED")
        self.assertTrue(c.deadline_passed)
        c.set_deadline(None)
        self.assertTrue(self.b.extend("PT1M"))

    def test_error_attributes(self):
        missing = "ocid1.sandbox.oc1.us-chicago-1.aaaaaaaanosuchsandbox"
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.Backend.connect(missing).sandbox()
        e = cm.exception
        self.assertEqual(e.code, "ENOTFOUND")
        self.assertEqual(e.errno, -3)
        self.assertEqual(e.status, 404)
        self.assertIsInstance(e.request_id, str)
        self.assertTrue(e.request_id)
        self.assertIn(e.request_id, str(e))
        self.assertGreaterEqual(e.attempts, 1)

    def test_bad_expiration_refused_before_any_request(self):
        with self.assertRaises(ocisbx.Error) as cm:
            ocisbx.Backend.create(expiration="PT49H")
        self.assertIn(cm.exception.code, ("EINVAL", "EPARSE"))
        self.assertIsNone(cm.exception.status)

    def test_oci_cli_variables(self):
        """The library's resolver: the OCI CLI's variables, ours winning."""
        os.environ["OCI_CLI_PROFILE"] = "Nope"
        try:
            with self.assertRaises(ocisbx.Error) as cm:
                ocisbx.Backend.connect(self.b.sandbox_id)
            self.assertIn("OCI_CLI_PROFILE=Nope", str(cm.exception))
            self.assertIn("profile [Nope] not found", str(cm.exception))
            os.environ["OCI_SANDBOX_PROFILE"] = "DEFAULT"  # ours wins over the OCI CLI's
            b = ocisbx.Backend.connect(self.b.sandbox_id)
            b.close()
            # a keyword wins over both
            del os.environ["OCI_SANDBOX_PROFILE"]
            b = ocisbx.Backend.connect(self.b.sandbox_id, profile="DEFAULT")
            b.close()
        finally:
            os.environ.pop("OCI_CLI_PROFILE", None)
            os.environ.pop("OCI_SANDBOX_PROFILE", None)

    def test_keywords_instead_of_environment(self):
        saved = {k: os.environ.pop(k) for k in ("OCI_SANDBOX_ENDPOINT", "OCI_CONFIG_FILE", "OCI_SANDBOX_REGION")}
        try:
            with self.assertRaises(ocisbx.Error):  # nothing points at the tenancy now
                ocisbx.Backend.connect(self.b.sandbox_id, config_file=os.path.join(self.scratch, "none"))
            b = ocisbx.Backend.connect(self.b.sandbox_id, endpoint=saved["OCI_SANDBOX_ENDPOINT"],
                                       config_file=saved["OCI_CONFIG_FILE"], region="xx-test-1")
            self.assertEqual(b.label, "oci-sandbox:xx-test-1/" + self.b.sandbox_id)
            b.close()
            # transport settings reach the client the package builds
            with self.assertRaises(ocisbx.Error) as cm:
                ocisbx.Backend.connect(self.b.sandbox_id, endpoint=saved["OCI_SANDBOX_ENDPOINT"],
                                       config_file=saved["OCI_CONFIG_FILE"], max_attempts=0)
            self.assertEqual(cm.exception.code, "EINVAL")
            self.assertIn("max attempts", str(cm.exception))
        finally:
            os.environ.update(saved)


if __name__ == "__main__":
    unittest.main()
