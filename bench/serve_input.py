"""One input to ``terrarium serve``, end to end, in one process: the server's CPU per input.

The app of ``bench/serve.py``'s echo team (scripted model) is run in this process (its
lifespan's session manager in a task group) and driven through httpx's ASGI transport:
``--sessions`` sessions each get ``--inputs`` inputs one after another, each awaited until
its turn has ended (its ``turn_ended`` event committed). What one input costs is the
process's CPU time (``time.process_time``) divided by the inputs, and the number of
SQLite transactions and rows per input (counted at ``DurableLog.write_batch`` and its
single-row writes). ``--profile FILE`` writes cProfile statistics of the timed part.

    python bench/serve_input.py [--sessions 10] [--inputs 20] [--profile /tmp/input.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve import write_team  # the same team as bench/serve.py


def count_writes(log: Any) -> dict[str, int]:
    """Wrap the log's writes to count transactions and rows."""
    counts = {"tx": 0, "rows": 0}
    batch, single = log.write_batch, log._write

    def write_batch(ops: Any) -> None:
        ops = list(ops)
        counts["tx"] += 1
        counts["rows"] += sum(len(rows) for _, rows in ops)
        batch(ops)

    def write(sql: str, row: Any) -> int:
        counts["tx"] += 1
        counts["rows"] += 1
        return int(single(sql, row))

    log.write_batch, log._write = write_batch, write
    return counts


async def main(sessions: int, inputs: int, profile: str | None) -> None:
    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        team = write_team(Path(tmp) / "team")
        app = create_app(load_team(team), ServeSettings(
            runs_dir=Path(tmp) / "runs", rate=1e6, warm_up=False))
        mgr = app.state.manager
        async with anyio.create_task_group() as tg:
            await tg.start(mgr.run)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                ids = [(await c.post("/v1/sessions", json={})).json()["id"]
                       for _ in range(sessions)]

                async def one(sid: str, text: str) -> None:
                    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
                    assert r.status_code == 202, r.text
                    after = r.json()["seq"]
                    events = mgr.events_of(sid)
                    while True:
                        rows = await events.wait(after)
                        if any(kind == "turn_ended" for _, kind, _ in rows):
                            return
                        after = rows[-1][0]

                async def each(text: str) -> None:
                    async with anyio.create_task_group() as g:
                        for sid in ids:
                            g.start_soon(one, sid, text)

                await each("warm")  # loads every session
                await each("warm again")
                counts = count_writes(mgr.log)
                prof = cProfile.Profile(time.process_time) if profile else None  # CPU, not wall
                cpu, wall = time.process_time(), time.perf_counter()
                if prof:
                    prof.enable()
                for i in range(inputs):
                    await each(f"input {i}")
                if prof:
                    prof.disable()
                    prof.dump_stats(profile)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            n = sessions * inputs
            print(f"{n} inputs ({sessions} sessions x {inputs}): server CPU "
                  f"{cpu / n * 1000:.2f} ms per input, wall {wall / n * 1000:.2f} ms; "
                  f"SQLite transactions per input {counts['tx'] / n:.2f}, rows "
                  f"{counts['rows'] / n:.2f}" + (" (profiled)" if profile else ""))
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=20)
    ap.add_argument("--profile", metavar="FILE")
    a = ap.parse_args()
    anyio.run(main, a.sessions, a.inputs, a.profile)
