"""ocisbx.Fleet against a local test tenancy (examples/run-with-tenancy.sh
exports it): one Python thread, the engine's own loop and asyncio's loop
give the same results."""

import asyncio
import os
import unittest

import ocisbx
import fleet_asyncio

COMMAND = "echo n=$OCISBX_FLEET_INDEX; exit $((OCISBX_FLEET_INDEX % 2))"


class FleetTests(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("OCI_SANDBOX_PROJECT_ID"):
            if os.environ.get("OCISBX_REQUIRE_TENANCY"):
                self.fail("no tenancy in the environment")
            self.skipTest("no tenancy (OCI_SANDBOX_PROJECT_ID)")

    def test_run_each(self):
        with ocisbx.Fleet(poll_interval_ms=200) as fleet:
            rows = fleet.run_each(6, COMMAND)
            self.assertEqual(fleet.pending, 0)
        self.assertEqual([r["index"] for r in rows], list(range(6)))
        for r in rows:
            self.assertIsNone(r["error"], r)
            self.assertTrue(r["sandbox_id"])
            self.assertEqual(r["result"]["exit_code"], r["index"] % 2)
            self.assertEqual(r["result"]["output"], b"n=%d\n" % r["index"])

    def test_asyncio_loop_same_results(self):
        with ocisbx.Fleet(poll_interval_ms=200) as fleet:
            rows = asyncio.run(fleet_asyncio.fleet_exec(fleet, 6, COMMAND))
            self.assertEqual(fleet.pending, 0)
        for r in rows:
            self.assertIsNone(r["error"], r)
            self.assertEqual(r["exit_code"], r["index"] % 2)
            self.assertEqual(r["output"], b"n=%d\n" % r["index"])

    def test_write_and_read_a_file(self):
        data = bytes(range(256)) * 40000  # above one part: chunked, joined, checked
        got = {}
        with ocisbx.Fleet(poll_interval_ms=200) as fleet:
            def on_read(err, value):
                got.update(read_error=err, data=value)
                fleet.close(got["sb"], lambda e, v: got.update(close_error=e))

            def on_write(err, _v):
                got["write_error"] = err
                fleet.read_file(got["sb"], "dir/data.bin", on_read)

            def on_create(err, sb):
                self.assertIsNone(err)
                got["sb"] = sb
                fleet.write_file(sb, "dir/data.bin", data, on_write)
            fleet.create(on_create)
            fleet.run()
        self.assertIsNone(got["write_error"])
        self.assertIsNone(got["read_error"])
        self.assertIsNone(got["close_error"])
        self.assertEqual(got["data"], data)

    def test_a_failing_callback_is_raised_by_run(self):
        with ocisbx.Fleet(poll_interval_ms=200) as fleet:
            def boom(err, sb):
                fleet.close(sb, lambda e, v: None)
                raise ValueError("from the callback")
            fleet.create(boom)
            with self.assertRaises(ValueError):
                fleet.run()
            fleet.run()
            self.assertEqual(fleet.pending, 0)


if __name__ == "__main__":
    unittest.main()
