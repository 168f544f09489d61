"""``terrarium serve`` under load, on the scripted model, beside a same-run baseline.

A server process (this file with ``--server``) hosts a one-creature echo team (the
scripted model answers at once) on uvicorn, plus a bare Starlette endpoint on the same
uvicorn that does the same JSON round trip as ``POST /v1/sessions/{id}/input`` without a
team: the baseline. The client (this process) then, for 1, 10, 100 and 1,000 concurrent
sessions:

- API: every session posts inputs back to back; requests per second beside the baseline's
  at the same concurrency (the target: at least 0.5x);
- turns: every session sends ``--turns`` inputs, each followed over SSE until its turn
  ends; turns per second and input-to-first-event latency (POST sent → first event of it
  read from the stream), p50 and p99;
- memory: the server's RSS with those sessions loaded (one input each) and idle, no
  connection open, minus its RSS before, per session (measured first).

Then 10,000 stored sessions (``--stored``): created, ``--fed`` of them given one input
(so loaded), and the idle ones unloaded by the server (``--idle-unload``); how many stay
loaded and the RSS after.

    python bench/serve.py [--sessions 1,10,100,1000] [--turns 3] [--stored 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent

TEAM = """\
terrarium:
  name: echo
  input_channel: inbox
  creatures:
    - name: echo
      config: echo
      channels: {listen: [inbox]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
"""
CREATURE = """\
name: echo
controller: {provider: scripted, script: script.yaml}
skill_mode: static
history_turns: 2
output: {default: out, named_outputs: {out: {type: stdout}}}
"""
SCRIPT = 'default_reply: "Heard you."\nchunk: 64\n'


def write_team(folder: Path) -> Path:
    (folder / "echo").mkdir(parents=True, exist_ok=True)
    (folder / "terrarium.yaml").write_text(TEAM)
    (folder / "echo" / "config.yaml").write_text(CREATURE)
    (folder / "echo" / "script.yaml").write_text(SCRIPT)
    return folder


# ---------------------------------------------------------------------- the server process
def run_server(port: int, runs: Path, team: Path, idle_unload: float,
               profile: str | None = None) -> None:
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    app = create_app(load_team(team), ServeSettings(
        runs_dir=runs, rate=1e6, idle_unload=idle_unload, reap_every=0.5, warm_up=False))

    async def bare(request: Request) -> JSONResponse:
        """The baseline: read a JSON body, answer JSON (no team, no log)."""
        body = json.loads(await request.body())
        return JSONResponse({"accepted": bool(body.get("text")), "seq": 0}, status_code=202)

    async def rss(request: Request) -> JSONResponse:
        import gc

        gc.collect()
        pages = int(Path("/proc/self/statm").read_text().split()[1])  # noqa: ASYNC240
        mgr = request.app.state.manager
        return JSONResponse({"rss": pages * os.sysconf("SC_PAGE_SIZE"),
                             "loaded": len(mgr.loaded), "stored": mgr.store.count()})

    app.router.routes.insert(0, Route("/bench/echo/{session_id}", bare, methods=["POST"]))
    app.router.routes.insert(0, Route("/bench/rss", rss, methods=["GET"]))
    config = dict(host="127.0.0.1", port=port, log_level="warning", access_log=False,
                  backlog=4096, timeout_keep_alive=60)
    if not profile:
        uvicorn.run(app, **config)
        return
    import cProfile
    import signal

    # uvicorn raises the signal again after its graceful exit: let that return here
    signal.signal(signal.SIGTERM, lambda *_: None)
    with cProfile.Profile() as prof:  # the server's CPU by function (--profile)
        uvicorn.run(app, **config)
    prof.dump_stats(profile)


# ---------------------------------------------------------------------- the client
def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))] if xs else float("nan")


async def make_sessions(c: httpx.AsyncClient, n: int) -> list[str]:
    ids: list[str] = []
    sem = anyio.Semaphore(64)  # httpx's pool slows down badly with thousands waiting

    async def one() -> None:
        async with sem:
            ids.append((await c.post("/v1/sessions", json={})).json()["id"])

    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one)
    return ids


async def hammer(c: httpx.AsyncClient, paths: list[str], per: int) -> float:
    """Every path posted ``per`` times back to back, all paths at once; requests/s."""
    async def one(path: str) -> None:
        for i in range(per):
            r = await c.post(path, json={"text": f"hello {i}"})
            assert r.status_code == 202, r.text

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for p in paths:
            tg.start_soon(one, p)
    return len(paths) * per / (time.perf_counter() - t0)


async def turn(c: httpx.AsyncClient, sid: str, i: int, firsts: list[float]) -> None:
    """One input and its events over SSE, until its turn has ended."""
    t0 = time.perf_counter()
    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": f"turn {i}"})
    assert r.status_code == 202, r.text
    first = True
    async with c.stream("GET", f"/v1/sessions/{sid}/events?after={r.json()['seq']}") as s:
        async for line in s.aiter_lines():
            if not line.startswith("event: "):
                continue
            if first:
                firsts.append((time.perf_counter() - t0) * 1000)
                first = False
            if line == "event: turn_ended":
                return


async def turns(c: httpx.AsyncClient, ids: list[str], per: int) -> tuple[float, list[float]]:
    firsts: list[float] = []

    async def one(sid: str) -> None:
        for i in range(per):
            await turn(c, sid, i, firsts)

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for sid in ids:
            tg.start_soon(one, sid)
    return len(ids) * per / (time.perf_counter() - t0), firsts


async def rss(c: httpx.AsyncClient) -> dict[str, Any]:
    return (await c.get("/bench/rss")).json()  # type: ignore[no-any-return]


async def client(base: str, sizes: list[int], per: int, stored: int, fed: int) -> None:
    limits = httpx.Limits(max_connections=2200, max_keepalive_connections=2200)
    async with httpx.AsyncClient(base_url=base, timeout=600) as ctl:
        print(f"{'sessions':>8} {'api req/s':>10} {'base req/s':>10} {'ratio':>6} "
              f"{'turns/s':>8} {'first p50':>10} {'first p99':>10} {'KB/idle':>8}")
        for n in sizes:
            k = per if n <= 100 else 1  # 1,000 sessions: one input each per phase
            before = await rss(ctl)
            # memory: n sessions loaded by one input each, idle, no connection left open
            async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as c:
                ids = await make_sessions(c, n)
                sem = anyio.Semaphore(20)

                async def first(sid: str, c: httpx.AsyncClient = c,
                                sem: anyio.Semaphore = sem) -> None:
                    async with sem:
                        await turn(c, sid, 0, [])

                async with anyio.create_task_group() as tg:
                    for sid in ids:
                        tg.start_soon(first, sid)
            await anyio.sleep(1.0)
            idle = await rss(ctl)
            kb = (idle["rss"] - before["rss"]) / 1024 / max(1, idle["loaded"]
                                                               - before["loaded"])
            async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as c:
                base_rps = await hammer(c, [f"/bench/echo/{s}" for s in ids], k)
                api_rps = await hammer(c, [f"/v1/sessions/{s}/input" for s in ids], k)
                tps, firsts = await turns(c, ids, k)
            print(f"{n:>8} {api_rps:>10.0f} {base_rps:>10.0f} {api_rps / base_rps:>6.2f} "
                  f"{tps:>8.0f} {pct(firsts, 50):>8.1f}ms {pct(firsts, 99):>8.1f}ms "
                  f"{kb:>8.0f}", flush=True)
            for sid in ids:  # the next size starts from none loaded
                await ctl.delete(f"/v1/sessions/{sid}")
        c = ctl
        if stored:
            before = await rss(c)
            t0 = time.perf_counter()
            ids = await make_sessions(c, stored)
            made = time.perf_counter() - t0
            sem = anyio.Semaphore(200)

            async def once(sid: str) -> None:
                async with sem:
                    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})
                    assert r.status_code == 202, r.text

            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for sid in ids[:fed]:
                    tg.start_soon(once, sid)
            took = time.perf_counter() - t0
            peak = await rss(c)
            for _ in range(600):
                now = await rss(c)
                if now["loaded"] == 0:
                    break
                await anyio.sleep(0.5)
            print(f"\n{stored} stored sessions: created in {made:.1f} s; one input to {fed} "
                  f"of them in {took:.1f} s; loaded right after: {peak['loaded']} "
                  f"(RSS {peak['rss'] / 2**20:.0f} MiB); after the idle unload: "
                  f"{now['loaded']} loaded of {now['stored']} stored, RSS "
                  f"{now['rss'] / 2**20:.0f} MiB (before: {before['rss'] / 2**20:.0f} MiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,10,100,1000")
    ap.add_argument("--turns", type=int, default=3, help="inputs per session per phase")
    ap.add_argument("--stored", type=int, default=10000)
    ap.add_argument("--fed", type=int, default=1000,
                    help="how many of the stored sessions get an input (are loaded)")
    ap.add_argument("--idle-unload", type=float, default=20.0)
    ap.add_argument("--profile", metavar="FILE",
                    help="write the server's cProfile statistics to FILE (pstats)")
    ap.add_argument("--server", nargs=3, metavar=("PORT", "RUNS", "TEAM"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.server:
        run_server(int(args.server[0]), Path(args.server[1]), Path(args.server[2]),
                   args.idle_unload, args.profile)
        return
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        team = write_team(Path(tmp) / "team")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        server = subprocess.Popen(
            [sys.executable, __file__, "--server", str(port), str(Path(tmp) / "runs"),
             str(team), "--idle-unload", str(args.idle_unload),
             *(["--profile", str(Path(args.profile).resolve())] if args.profile else [])],
            env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(base + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            print(f"terrarium serve, scripted echo team; server pid {server.pid}; "
                  f"{os.cpu_count()} CPUs (client and server share them)")
            anyio.run(client, base, [int(x) for x in args.sessions.split(",")], args.turns,
                      args.stored, args.fed)
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
