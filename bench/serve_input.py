"""One input to ``terrarium serve``, end to end, in one process: the server's CPU per input.

The app of ``bench/serve.py``'s echo team (scripted model) is run in this process (its
lifespan's session manager in a task group) and driven through httpx's ASGI transport:
``--sessions`` sessions each get ``--inputs`` inputs one after another, each awaited until
its turn has ended (its ``turn_ended`` event committed), all sessions at once (a closed
loop, as ``bench/serve.py``'s turns phase). Printed:

- the process's CPU time (``time.process_time``, client included) per input, the lowest
  of ``--rounds`` rounds (the machine is shared: the lowest is the least disturbed), beside
  the same client posting the same body to a bare Starlette route in the same app (what
  the HTTP round trip itself costs);
- SQLite transactions and rows per input (counted at ``DurableLog.write_batch`` and its
  single-row writes);
- how much work the process did between an input's POST and its first event committed,
  p50/p99, in process CPU: what it would take on a loop that ran only this server, however
  busy the machine (the client's own part is in it, the socket's is not).

``--profile FILE`` writes cProfile statistics (CPU time) of the first round.

``--sockets``: instead, the app on a real uvicorn in this process and ``bench/serve.py``'s
own client and turns phase (its lean HTTP client, one SSE stream per session) on the same
loop: input-to-first-event p50/p99 in process CPU, the socket hops included (each trip
round a loop that runs every session's turns).

    python bench/serve_input.py [--sessions 10] [--inputs 20] [--rounds 5]
    python bench/serve_input.py --profile /tmp/input.prof
    python bench/serve_input.py --sockets --sessions 100 --inputs 3 --turns-at-once 0

``--turns-at-once N``: the server's turn gate (``ServeSettings.turns_at_once``, default 1;
0 runs every ready turn's steps in each trip round the loop, as before the gate).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve as bench_serve  # the same team and client as bench/serve.py
from serve import write_team

TURNS_AT_ONCE = [1]  # the server's turn gate (--turns-at-once; 0: no gate)


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


async def bare(request: Any) -> Any:
    """The baseline route: read a JSON body, answer JSON (no team, no log)."""
    from starlette.responses import JSONResponse

    body = json.loads(await request.body())
    return JSONResponse({"accepted": bool(body.get("text")), "seq": 0}, status_code=202)


async def main(sessions: int, inputs: int, rounds: int, profile: str | None) -> None:
    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        team = write_team(Path(tmp) / "team")
        app = create_app(load_team(team), ServeSettings(
            runs_dir=Path(tmp) / "runs", rate=1e6, warm_up=False,
            turns_at_once=TURNS_AT_ONCE[0]))
        mgr = app.state.manager
        from starlette.routing import Route

        app.router.routes.insert(0, Route("/bench/echo/{sid}", bare, methods=["POST"]))
        async with anyio.create_task_group() as tg:
            await tg.start(mgr.run)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                ids = [(await c.post("/v1/sessions", json={})).json()["id"]
                       for _ in range(sessions)]

                firsts: list[float] = []  # process CPU from POST to its first event

                async def one(sid: str, text: str) -> None:
                    t0 = time.process_time()
                    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
                    assert r.status_code == 202, r.text
                    after = r.json()["seq"]
                    events = mgr.events_of(sid)
                    first = True
                    while True:
                        rows = await events.wait(after)
                        if first:
                            firsts.append((time.process_time() - t0) * 1000)
                            first = False
                        if any(kind == "turn_ended" for _, kind, _ in rows):
                            return
                        after = rows[-1][0]

                async def closed(sid: str) -> None:
                    for i in range(inputs):
                        await one(sid, f"input {i}")

                async def each(text: str) -> None:
                    async with anyio.create_task_group() as g:
                        for sid in ids:
                            g.start_soon(one, sid, text)

                await each("warm")  # loads every session
                await each("warm again")
                counts = count_writes(mgr.log)
                firsts.clear()
                per: list[float] = []
                for r in range(rounds):
                    prof = cProfile.Profile(time.process_time) if profile and not r else None
                    cpu = time.process_time()
                    if prof:
                        prof.enable()
                    async with anyio.create_task_group() as g:
                        for sid in ids:  # each session: an input once its last turn ended
                            g.start_soon(closed, sid)
                    if prof:
                        prof.disable()
                        prof.dump_stats(profile)
                    per.append((time.process_time() - cpu) / (sessions * inputs))
                tx, rows = counts["tx"], counts["rows"]

                async def echo(sid: str) -> None:
                    for i in range(inputs):
                        r = await c.post(f"/bench/echo/{sid}", json={"text": f"input {i}"})
                        assert r.status_code == 202

                base: list[float] = []
                for _ in range(rounds):
                    cpu = time.process_time()
                    async with anyio.create_task_group() as g:
                        for sid in ids:
                            g.start_soon(echo, sid)
                    base.append((time.process_time() - cpu) / (sessions * inputs))
            n = sessions * inputs * rounds
            print(f"{sessions} sessions x {inputs} inputs, best of {rounds}: process CPU "
                  f"{min(per) * 1000:.2f} ms per input (bare route: {min(base) * 1000:.2f} ms "
                  f"per request, same client); SQLite transactions per input {tx / n:.2f}, "
                  f"rows {rows / n:.2f}; load {os.getloadavg()[0]:.1f}"
                  + (" (first round profiled)" if profile else ""))
            firsts.sort()
            print("rounds (ms per input):", " ".join(f"{x * 1000:.2f}" for x in per),
                  "; POST to its first event committed, in process CPU (the work done before "
                  f"it, whatever the load): p50 {firsts[len(firsts) // 2]:.1f} ms, p99 "
                  f"{firsts[min(len(firsts) - 1, round(0.99 * (len(firsts) - 1)))]:.1f} ms")
            tg.cancel_scope.cancel()


async def sockets(sessions: int, inputs: int) -> None:
    """``bench/serve.py``'s turns phase against a uvicorn in this process, its latency
    clocked in process CPU (see the module's docstring)."""
    import socket
    import types

    import uvicorn

    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(load_team(write_team(Path(tmp) / "team")), ServeSettings(
            runs_dir=Path(tmp) / "runs", rate=1e6, warm_up=False, idle_unload=3600,
            turns_at_once=TURNS_AT_ONCE[0]))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning", access_log=False))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:  # noqa: ASYNC110 (uvicorn sets a flag, no event)
                await anyio.sleep(0.05)
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base) as c:
                ids = await bench_serve.make_sessions(c, sessions)
            for sid in ids:
                await bench_serve.turn(base, sid, 0, [])
            bench_serve.time = types.SimpleNamespace(perf_counter=time.process_time)
            cpu = time.process_time()
            _, firsts = await bench_serve.turns(base, ids, inputs)
            cpu = time.process_time() - cpu
            print(f"{sessions} sessions x {inputs} inputs over sockets (server and client in "
                  f"one process): CPU per input {cpu / (sessions * inputs) * 1000:.2f} ms; "
                  f"input to first event read, in process CPU: p50 "
                  f"{bench_serve.pct(firsts, 50):.1f} ms, p99 {bench_serve.pct(firsts, 99):.1f}"
                  f" ms; load {os.getloadavg()[0]:.1f}")
            server.should_exit = True


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", metavar="FILE")
    ap.add_argument("--sockets", action="store_true")
    ap.add_argument("--turns-at-once", type=int, default=1,
                    help="the server's turn gate (ServeSettings.turns_at_once; 0: none)")
    a = ap.parse_args()
    TURNS_AT_ONCE[0] = a.turns_at_once
    if a.sockets:
        anyio.run(sockets, a.sessions, a.inputs)
    else:
        anyio.run(main, a.sessions, a.inputs, a.rounds, a.profile)
