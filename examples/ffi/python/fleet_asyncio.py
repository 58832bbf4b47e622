"""fleet_asyncio.py: the engine driven from asyncio's event loop through
its file descriptors and its timer (ocisbx.Fleet.set_loop_callbacks),
no thread of its own: N sandboxes, a command in each, all closed.

    python3 fleet_asyncio.py [N]     (the tenancy from the environment:
                                      OCI_SANDBOX_PROJECT_ID, _ENDPOINT, ...)

Prints one line a sandbox and exits 0 when every command exited 0.
"""

import asyncio
import os
import sys

import ocisbx


async def fleet_exec(fleet: ocisbx.Fleet, count: int, command: str):
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    watched = {}  # fd -> what
    timer = [None]

    def on_socket(fd, what):
        old = watched.pop(fd, 0)
        if old & ocisbx.POLL_IN:
            loop.remove_reader(fd)
        if old & ocisbx.POLL_OUT:
            loop.remove_writer(fd)
        if what == ocisbx.POLL_REMOVE:
            return
        watched[fd] = what
        if what & ocisbx.POLL_IN:
            loop.add_reader(fd, ready, fd, ocisbx.POLL_IN)
        if what & ocisbx.POLL_OUT:
            loop.add_writer(fd, ready, fd, ocisbx.POLL_OUT)

    def on_timer(ms):
        if timer[0] is not None:
            timer[0].cancel()
            timer[0] = None
        if ms >= 0:
            timer[0] = loop.call_later(ms / 1000.0, fire)

    def settle():
        if fleet.pending == 0 and not done.done():
            done.set_result(None)

    def drive(step, *args):
        try:
            step(*args)
        except BaseException as e:  # a failing callback ends the wait with its exception
            if not done.done():
                done.set_exception(e)
            return
        settle()

    def ready(fd, events):
        drive(fleet.socket_action, fd, events)

    def fire():
        timer[0] = None
        drive(fleet.timeout)

    rows = [{"index": i, "sandbox_id": None, "exit_code": None, "output": b"", "error": None}
            for i in range(count)]

    def created(row):
        def cb(err, sb):
            if err is not None:
                row["error"] = err
                return
            row["sandbox_id"] = sb.sandbox_id
            fleet.exec(sb, command, execed(row, sb), env={"OCISBX_FLEET_INDEX": str(row["index"])})
        return cb

    def execed(row, sb):
        def cb(err, res):
            row["error"] = err
            if res is not None:
                row["exit_code"], row["output"] = res["exit_code"], res["output"]
            fleet.close(sb, lambda e, _v: row.update(error=row["error"] or e))
        return cb

    fleet.set_loop_callbacks(on_socket, on_timer)
    for row in rows:
        fleet.create(created(row))
    settle()
    await done
    for fd, what in list(watched.items()):
        on_socket(fd, ocisbx.POLL_REMOVE)
    if timer[0] is not None:
        timer[0].cancel()
    return rows


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with ocisbx.Fleet(os.environ.get("OCI_SANDBOX_PROJECT_ID"), poll_interval_ms=200) as fleet:
        rows = asyncio.run(fleet_exec(fleet, count, "echo sandbox-$OCISBX_FLEET_INDEX"))
    bad = 0
    for r in rows:
        out = r["output"].decode(errors="replace").strip()
        print("%d %s exit=%s %s%s" % (r["index"], r["sandbox_id"], r["exit_code"], out,
                                     " error: %s" % r["error"] if r["error"] else ""))
        bad += r["error"] is not None or r["exit_code"] != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
