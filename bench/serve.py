"""``terrarium serve`` under load, on the scripted model, beside a same-run baseline.

A server process (this file with ``--server``) hosts a one-creature echo team (the
scripted model answers at once) on uvicorn, plus a bare Starlette endpoint on the same
uvicorn that does the same JSON round trip as ``POST /v1/sessions/{id}/input`` without a
team: the baseline. The client (this process; a lean HTTP/1.1 client of its own, as httpx
was slower than the server it measured) then, for 1, 10, 100 and 1,000 concurrent sessions:

- memory: the server's RSS with those sessions loaded (one input each) and idle, no
  connection open, minus its RSS before, per session (measured first; a warm-up session
  made and deleted before the table keeps one-off costs out of it);
- API: every session posts inputs back to back; requests per second beside the baseline's
  at the same concurrency (the target: at least 0.5x). Every input starts a turn, which
  competes with the requests for the CPU. Each hammer is at least ``--requests`` long (at
  most 60 inputs a session, its inbox's room), and the bare and api hammers run in pairs,
  ``--repeats`` times (each pair's api turns all done before the next): the row prints the
  medians, the median of the pairs' ratios and their range;
- turns: once the API phase's turns have all run, every session sends ``--turns`` inputs,
  each followed over SSE until its turn ends; turns per second and input-to-first-event
  latency (POST sent -> first event of it read from the stream), p50 and p99.

Each row ends with the machine's load average (``uptime``), then process CPU, which a busy
machine disturbs less than the clock: the server's per request of each hammer (the bare
route's; the api's, with what its turns did meanwhile; medians of the pairs) and per input
of the turns phase (its turn and stream included; the input that opened each stream
counted), and the client's per request of each hammer (whichever of the two is the larger
bounds the requests per second where each has a core); last, per input of the api hammer,
the server's SQLite commits and the turns that ended while it ran. After the table, the
targets are checked. Then 10,000 stored sessions (``--stored``): created, ``--fed`` of them
given one input (so loaded), and the idle ones unloaded by the server (``--idle-unload``);
how many stay loaded and the RSS after.

    python bench/serve.py [--sessions 1,10,100,1000] [--turns 3] [--stored 10000]
        [--requests 300] [--repeats 3]   # each hammer's least length; pairs a row
    python bench/serve.py --code /path/to/other/checkout   # the same bench, other code
    python bench/serve.py --sessions 100 --stored 0 --profile /tmp/serve.prof
        # the server's CPU by function (cProfile) in the api phase (/tmp/serve.prof.api)
        # and in the turns phase (/tmp/serve.prof.turns)
    python bench/serve.py --turns-at-once 0   # the server without its turn gate
    python bench/serve.py --double-texting enqueue   # one table: a turn each input
    python bench/serve.py --double-texting merge:0.05   # merge, waiting 50 ms for more

The table is printed twice by default: with the echo creature's ``double_texting:
enqueue`` (a turn each input, as before the option) and ``merge:0.02`` (``merge`` with a
20 ms ``double_texting_wait``: inputs that come while a turn waits or runs share the next
turn; the row's turns column says how many turns the api hammer's inputs had). The
stored sessions run after the last table only.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
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
STREAMED = "Heard you. " * 12  # 132 characters (bench/serve_turn.py --chunk)


def write_team(folder: Path, double_texting: str = "enqueue", chunk: int | None = None
               ) -> Path:
    """The echo team; ``double_texting`` its creature's (the default, enqueue, is left
    unwritten, so a checkout from before the option runs the same team). ``chunk``: the
    reply is ``STREAMED`` in deltas of that many characters instead (a model's stream)."""
    (folder / "echo").mkdir(parents=True, exist_ok=True)
    (folder / "terrarium.yaml").write_text(TEAM)
    mode, _, wait = double_texting.partition(":")  # merge:0.02 -> its double_texting_wait
    extra = "" if mode == "enqueue" else f"double_texting: {mode}\n"
    extra += f"double_texting_wait: {wait}\n" if wait else ""
    (folder / "echo" / "config.yaml").write_text(CREATURE + extra)
    (folder / "echo" / "script.yaml").write_text(
        SCRIPT if chunk is None else f'default_reply: "{STREAMED}"\nchunk: {chunk}\n')
    return folder


# ---------------------------------------------------------------------- the server process
def run_server(port: int, runs: Path, team: Path, idle_unload: float,
               profile: str | None = None, turns_at_once: int | None = None) -> None:
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    gate = {} if turns_at_once is None else {"turns_at_once": turns_at_once}
    app = create_app(load_team(team), ServeSettings(
        runs_dir=runs, rate=1e6, idle_unload=idle_unload, reap_every=0.5, warm_up=False,
        **gate))

    gc_time = [0.0]  # seconds the server spent collecting garbage
    gc_began = [0.0]

    def gc_clock(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_began[0] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - gc_began[0]

    gc.callbacks.append(gc_clock)

    async def bare(request: Request) -> JSONResponse:
        """The baseline: read a JSON body, answer JSON (no team, no log)."""
        body = json.loads(await request.body())
        return JSONResponse({"accepted": bool(body.get("text")), "seq": 0}, status_code=202)

    async def rss(request: Request) -> JSONResponse:
        cpu = time.process_time()  # before the bench's own work below
        if request.query_params.get("gc") != "0":
            gc.callbacks.remove(gc_clock)  # this collection is the bench's, not the server's
            gc.collect()
            gc.callbacks.append(gc_clock)
        pages = int(Path("/proc/self/statm").read_text().split()[1])  # noqa: ASYNC240
        mgr = request.app.state.manager
        return JSONResponse({"rss": pages * os.sysconf("SC_PAGE_SIZE"),
                             "loaded": len(mgr.loaded), "stored": mgr.store.count(),
                             "busy": sum(1 for live in list(mgr.loaded.values())
                                         if live.busy() or mgr._unread(live.info.run_id)),
                             "cpu": cpu, "gc": gc_time[0],
                             # SQLite commits so far, and turns ended (committed)
                             "commits": getattr(mgr.log_writer, "commits", 0),
                             "turns": mgr.log.query("SELECT total(turns) FROM sessions")[0][0]})

    import cProfile

    # CPU by function (--profile), one profile per timed phase: FILE.api, FILE.turns
    profs = {"api": cProfile.Profile(time.process_time),
             "turns": cProfile.Profile(time.process_time)}

    async def profiling(request: Request) -> JSONResponse:
        """The client turns a phase's profile on (``?phase=``) and off (no phase)."""
        phase = request.query_params.get("phase")
        if profile:
            for prof in profs.values():  # (each one's disable unsets the thread's profiler)
                prof.disable()
            if phase in profs:
                profs[phase].enable()
        return JSONResponse({"profile": bool(profile)})

    app.router.routes.insert(0, Route("/bench/echo/{session_id}", bare, methods=["POST"]))
    app.router.routes.insert(0, Route("/bench/rss", rss, methods=["GET"]))
    app.router.routes.insert(0, Route("/bench/profile", profiling, methods=["POST"]))
    config = dict(host="127.0.0.1", port=port, log_level="warning", access_log=False,
                  backlog=4096, timeout_keep_alive=60)
    if not profile:
        uvicorn.run(app, **config)
        return
    import signal

    # uvicorn raises the signal again after its graceful exit: let that return here
    signal.signal(signal.SIGTERM, lambda *_: None)
    uvicorn.run(app, **config)
    for name, prof in profs.items():
        prof.disable()
        prof.dump_stats(f"{profile}.{name}")


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


class Conn:
    """A lean HTTP/1.1 client connection (keep-alive, JSON bodies, chunked streams).

    httpx costs the client milliseconds of CPU per request and its pool slows down with
    hundreds of connections; on a 2-core machine shared with the server the client was
    then what the figures measured (the bare baseline fell from ~200 to ~40 requests/s
    between 10 and 100 sessions on a quiet machine). The timed phases use this instead:
    one connection per session for its inputs, a fresh one per event stream."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.s: anyio.abc.SocketStream | None = None
        self.buf = b""

    async def _sock(self) -> anyio.abc.SocketStream:
        if self.s is None:
            self.s = await anyio.connect_tcp(self.host, self.port)
            self.buf = b""
        return self.s

    async def aclose(self) -> None:
        if self.s is not None:
            await self.s.aclose()
            self.s = None

    async def _fill(self) -> None:
        assert self.s is not None
        self.buf += await self.s.receive(65536)

    async def _until(self, sep: bytes) -> bytes:
        while (i := self.buf.find(sep)) < 0:
            await self._fill()
        out, self.buf = self.buf[:i], self.buf[i + len(sep):]
        return out

    async def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            await self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    async def _head(self) -> tuple[int, dict[str, str]]:
        lines = (await self._until(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        heads = dict(line.split(":", 1) for line in lines[1:])
        return int(lines[0].split()[1]), {k.strip().lower(): v.strip() for k, v in heads.items()}

    async def _chunk(self) -> bytes:
        size = int((await self._until(b"\r\n")).split(b";")[0], 16)
        data = await self._exactly(size)
        await self._until(b"\r\n")
        return data

    async def post(self, path: str, obj: Any) -> tuple[int, Any]:
        """POST ``obj`` as JSON; the status and the decoded answer. A kept-alive
        connection the server closed meanwhile (uvicorn's keep-alive timeout) is opened
        again and the request sent again, as any HTTP client does."""
        body = json.dumps(obj).encode()
        request = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: "
                   f"application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        fresh = self.s is None
        try:
            await (await self._sock()).send(request)
            status, heads = await self._head()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
            if fresh or self.buf:
                raise
            await self.aclose()
            await (await self._sock()).send(request)
            status, heads = await self._head()
        if "content-length" in heads:
            data = await self._exactly(int(heads["content-length"]))
        else:
            data = b""
            while chunk := await self._chunk():
                data += chunk
        if heads.get("connection") == "close":
            await self.aclose()
        return status, json.loads(data) if data else None

    async def events(self, path: str) -> AsyncIterator[tuple[int, str]]:
        """``(id, event)`` of each Server-Sent Event, as they arrive (on this connection,
        which the stream then owns: close it after)."""
        sock = await self._sock()
        await sock.send(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                        "Accept: text/event-stream\r\n\r\n".encode())
        status, _ = await self._head()
        assert status == 200, status
        text = ""
        seq = 0
        while True:
            text += (await self._chunk()).decode()
            *lines, text = text.split("\n")
            for line in lines:
                if line.startswith("id: "):
                    seq = int(line[4:])
                elif line.startswith("event: "):
                    yield seq, line[7:]


def address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


async def hammer(base: str, paths: list[str], per: int) -> float:
    """Every path posted ``per`` times back to back, all paths at once; requests/s."""
    async def one(path: str) -> None:
        conn = Conn(*address(base))
        try:
            for i in range(per):
                status, answer = await conn.post(path, {"text": f"hello {i}"})
                assert status == 202, answer
        finally:
            await conn.aclose()

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for p in paths:
            tg.start_soon(one, p)
    return len(paths) * per / (time.perf_counter() - t0)


INBOX_ROOM = 60  # inputs a session gets per hammer at most: its inbox holds 64 (a full
# one holds the request until a turn takes one, and the hammer would time the turns)


def hammered(n: int, k: int, requests: int) -> int:
    """Inputs per session in each hammer of an ``n``-session row: ``k``, or more so that
    the hammer is at least ``requests`` long (a few requests are no sample: the quiet
    re-measure's 10-session row was 30 requests and one hammer)."""
    return max(k, min(INBOX_ROOM, -(-requests // n)))


async def throughput(ctl: httpx.AsyncClient, base: str, ids: list[str], per: int,
                     repeats: int) -> dict[str, list[float]]:
    """The bare and the api hammer, one after the other, ``repeats`` times (each api
    hammer's turns all run before the next pair: neither hammer has the other's backlog in
    it); each pair's requests/s, their ratio, and the server's and the client's CPU per
    request of each hammer (the api's with what its turns did meanwhile)."""
    got: dict[str, list[float]] = {k: [] for k in (
        "base", "api", "ratio", "cpu_base", "cpu_api", "client_base", "client_api",
        "commits", "turns")}
    count = len(ids) * per
    for _ in range(repeats):
        c0, m0 = await cpu(ctl), time.process_time()
        base_rps = await hammer(base, [f"/bench/echo/{s}" for s in ids], per)
        c1, m1 = await cpu(ctl), time.process_time()
        s1 = await rss(ctl, collect=False)
        await ctl.post("/bench/profile?phase=api")
        api_rps = await hammer(base, [f"/v1/sessions/{s}/input" for s in ids], per)
        await ctl.post("/bench/profile")
        c2, m2 = await cpu(ctl), time.process_time()
        s2 = await rss(ctl, collect=False)
        await quiet(ctl)
        for key, value in (("base", base_rps), ("api", api_rps), ("ratio", api_rps / base_rps),
                           ("cpu_base", (c1 - c0) / count), ("cpu_api", (c2 - c1) / count),
                           ("client_base", (m1 - m0) / count),
                           ("client_api", (m2 - m1) / count),
                           # per input of the api hammer: its commits, and the turns that
                           # ended while it ran (each input's turn competes with the inputs)
                           ("commits", (s2["commits"] - s1["commits"]) / count),
                           ("turns", (s2["turns"] - s1["turns"]) / count)):
            got[key].append(value)
    return got


async def turn(base: str, sid: str, i: int, firsts: list[float]) -> None:
    """One input and its events over a new SSE stream, until its turn has ended."""
    conn, stream = Conn(*address(base)), Conn(*address(base))
    try:
        t0 = time.perf_counter()
        status, answer = await conn.post(f"/v1/sessions/{sid}/input", {"text": f"turn {i}"})
        assert status == 202, answer
        first = True
        async for _, kind in stream.events(f"/v1/sessions/{sid}/events?after={answer['seq']}"):
            if first:
                firsts.append((time.perf_counter() - t0) * 1000)
                first = False
            if kind == "turn_ended":
                return
    finally:
        await stream.aclose()
        await conn.aclose()


async def turns(base: str, ids: list[str], per: int) -> tuple[float, list[float]]:
    """Every session keeps one event stream open (as the documented clients do) and
    sends ``per`` inputs on its own connection, each once the one before has ended its
    turn; the stream is opened by one input before the timing starts."""
    firsts: list[float] = []
    started = anyio.Event()
    ready = [0]

    async def one(sid: str) -> None:
        conn, stream = Conn(*address(base)), Conn(*address(base))
        events: AsyncIterator[tuple[int, str]] | None = None
        try:
            for i in range(per + 1):
                if i == 1:
                    ready[0] += 1
                    if ready[0] == len(ids):
                        started.set()
                    await started.wait()
                t0 = time.perf_counter()
                status, answer = await conn.post(f"/v1/sessions/{sid}/input",
                                                  {"text": f"turn {i}"})
                assert status == 202, answer
                after = answer["seq"]
                if events is None:
                    events = stream.events(f"/v1/sessions/{sid}/events?after={after}")
                first = i > 0
                async for seq, kind in events:
                    if seq <= after:  # the end of the turn before
                        continue
                    if first:
                        firsts.append((time.perf_counter() - t0) * 1000)
                        first = False
                    if kind == "turn_ended":
                        break
        finally:
            await stream.aclose()
            await conn.aclose()

    async with anyio.create_task_group() as tg:
        for sid in ids:
            tg.start_soon(one, sid)
        await started.wait()
        t0 = time.perf_counter()
    return len(ids) * per / (time.perf_counter() - t0), firsts


async def rss(c: httpx.AsyncClient, collect: bool = True) -> dict[str, Any]:
    """The server's RSS (after a full collection unless ``collect`` is False), loaded and
    stored sessions, those still busy, and its process CPU time so far."""
    path = "/bench/rss" if collect else "/bench/rss?gc=0"
    return (await c.get(path)).json()  # type: ignore[no-any-return]


async def cpu(c: httpx.AsyncClient) -> float:
    """The server's process CPU time (seconds; user and system), read without a collection."""
    return float((await rss(c, collect=False))["cpu"])


async def quiet(c: httpx.AsyncClient) -> None:
    """Wait until no session has a turn to run: the API phase's inputs each start a turn,
    and the turns phase must not measure its latency behind that backlog."""
    for _ in range(1200):
        if (await rss(c, collect=False))["busy"] == 0:
            return
        await anyio.sleep(0.25)


def load() -> str:
    """The machine's 1-minute load average (``uptime``), printed beside every figure."""
    return f"{os.getloadavg()[0]:.1f}"


async def client(base: str, sizes: list[int], per: int, stored: int, fed: int,
                 requests: int, repeats: int) -> None:
    limits = httpx.Limits(max_connections=2200, max_keepalive_connections=2200)
    async with httpx.AsyncClient(base_url=base, timeout=600) as ctl:
        print(f"load before: {load()} (uptime, 1 min)")
        print(f"{'sessions':>8} {'api req/s':>10} {'base req/s':>10} {'ratio':>6} "
              f"{'ratios':>11} {'requests':>8} "
              f"{'turns/s':>8} {'first p50':>10} {'first p99':>10} {'KB/idle':>8} "
              f"{'load':>5} | {'server CPU ms: base':>18} {'api':>5} {'turn':>5} | "
              f"{'client: base':>12} {'api':>5} | {'commits':>7} {'turns':>6}")
        rows: list[tuple[int, float, float, float]] = []
        # one session loaded and deleted first: what every server does once (the team's
        # dry start, modules imported on first use) is not charged to the 1-session row
        (warm,) = await make_sessions(ctl, 1)
        await turn(base, warm, 0, [])
        await quiet(ctl)
        await ctl.delete(f"/v1/sessions/{warm}")
        for n in sizes:
            k = per if n <= 100 else 1  # 1,000 sessions: one input each per phase
            before = await rss(ctl)
            # memory: n sessions loaded by one input each, idle, no connection left open
            async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as c:
                ids = await make_sessions(c, n)
            sem = anyio.Semaphore(20)

            async def first(sid: str, sem: anyio.Semaphore = sem) -> None:
                async with sem:
                    await turn(base, sid, 0, [])

            async with anyio.create_task_group() as tg:
                for sid in ids:
                    tg.start_soon(first, sid)
            await anyio.sleep(1.0)
            idle = await rss(ctl)
            kb = (idle["rss"] - before["rss"]) / 1024 / max(1, idle["loaded"]
                                                               - before["loaded"])
            got = await throughput(ctl, base, ids, hammered(n, k, requests), repeats)
            c3 = await cpu(ctl)
            await ctl.post("/bench/profile?phase=turns")
            tps, firsts = await turns(base, ids, k)
            await ctl.post("/bench/profile")
            c4 = await cpu(ctl)
            # the server's CPU per request of each hammer (the api's with what its turns
            # did meanwhile), per input of the turns phase (each session's k inputs and the
            # one that opened its stream, their turns and streams included), and the
            # client's (this process) per request of each hammer: which of the two bounds
            # the requests per second on a quiet machine, where each has a core
            med = {key: statistics.median(v) for key, v in got.items()}
            spent = [med["cpu_base"], med["cpu_api"], (c4 - c3) / (n * (k + 1)),
                     med["client_base"], med["client_api"]]
            rows.append((n, med["ratio"], pct(firsts, 99), kb))
            print(f"{n:>8} {med['api']:>10.0f} {med['base']:>10.0f} {med['ratio']:>6.2f} "
                  f"{min(got['ratio']):>5.2f}-{max(got['ratio']):<5.2f}"
                  f"{len(ids) * hammered(n, k, requests):>6}x{repeats:<2} "
                  f"{tps:>8.0f} {pct(firsts, 50):>8.1f}ms {pct(firsts, 99):>8.1f}ms "
                  f"{kb:>8.0f} {load():>5} | {spent[0] * 1e3:>18.2f} {spent[1] * 1e3:>5.2f} "
                  f"{spent[2] * 1e3:>5.2f} | {spent[3] * 1e3:>12.2f} {spent[4] * 1e3:>5.2f} | "
                  f"{med['commits']:>7.2f} {med['turns']:>6.2f}", flush=True)
            for sid in ids:  # the next size starts from none loaded
                await ctl.delete(f"/v1/sessions/{sid}")
        if rows:
            worst = min(rows, key=lambda r: r[1])
            p99 = [r[2] for r in rows if r[0] == 100]
            # per loaded idle session at the largest level up to 100: at 1,000 the sessions
            # loaded first may be unloaded (--idle-unload) before the last ones load
            kb = max((r for r in rows if r[0] <= 100), default=rows[0], key=lambda r: r[0])[3]
            print("\ntargets: ratio >= 0.5 at every level: "
                  f"{'met' if worst[1] >= 0.5 else 'NOT met'} (lowest {worst[1]:.2f} at "
                  f"{worst[0]}); p99 <= 50 ms at 100 sessions: "
                  + (f"{'met' if p99[0] <= 50 else 'NOT met'} ({p99[0]:.1f} ms)" if p99
                     else "not measured")
                  + "; <= 200 KB per loaded idle session: "
                  f"{'met' if kb <= 200 else 'NOT met'} ({kb:.0f} KB)", flush=True)
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
                  f"{now['rss'] / 2**20:.0f} MiB (before: {before['rss'] / 2**20:.0f} MiB); "
                  f"load {load()}. Target (idle ones unloaded): "
                  f"{'met' if now['loaded'] == 0 else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,10,100,1000")
    ap.add_argument("--turns", type=int, default=3, help="inputs per session per phase")
    ap.add_argument("--requests", type=int, default=300,
                    help="each hammer at least this long (up to 60 inputs a session)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="bare and api hammer pairs a row (medians printed)")
    ap.add_argument("--stored", type=int, default=10000)
    ap.add_argument("--fed", type=int, default=1000,
                    help="how many of the stored sessions get an input (are loaded)")
    ap.add_argument("--idle-unload", type=float, default=20.0)
    ap.add_argument("--code", type=Path, default=ROOT,
                    help="the checkout whose terrarium the server runs (default: this one; "
                    "give another to compare two versions with the same bench)")
    ap.add_argument("--profile", metavar="FILE",
                    help="write the server's cProfile statistics (CPU time) of the api phase "
                    "to FILE.api and of the turns phase to FILE.turns (pstats)")
    ap.add_argument("--turns-at-once", type=int, default=None,
                    help="the server's ServeSettings.turns_at_once (default: its default; "
                    "0: no turn gate)")
    ap.add_argument("--double-texting", default="enqueue,merge:0.02",
                    help="the echo creature's double_texting, one table each (comma list; "
                    "a checkout from before the option runs only enqueue)")
    ap.add_argument("--server", nargs=3, metavar=("PORT", "RUNS", "TEAM"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.server:
        run_server(int(args.server[0]), Path(args.server[1]), Path(args.server[2]),
                   args.idle_unload, args.profile, args.turns_at_once)
        return
    policies = args.double_texting.split(",")
    if not knows_double_texting(args.code) and policies != ["enqueue"]:
        print(f"{args.code} is from before the double_texting option: its table is "
              "enqueue's only (a turn each input)", flush=True)
        policies = ["enqueue"]
    for i, policy in enumerate(policies):
        if len(policies) > 1:
            print(f"\n== double_texting: {policy} ==" + (
                " (inputs that wait while a turn runs share the next turn: fewer turns than"
                " inputs in the api hammer, see its turns column; the turns phase sends one"
                " input at a time, so nothing merges there)" if policy.startswith("merge") else
                " (a turn each input, as before the option)"), flush=True)
        one_server(args, policy, args.stored if i == len(policies) - 1 else 0)


def knows_double_texting(code: Path) -> bool:
    """Whether the checkout's creature config has the option (an older one would refuse
    a team that sets it)."""
    return any("double_texting" in f.read_text()
               for f in (code / "terrarium" / "config").glob("*.py"))


def one_server(args: argparse.Namespace, policy: str, stored: int) -> None:
    """The table (and ``stored`` sessions) against one server of the echo team."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        team = write_team(Path(tmp) / "team", policy)
        env = {**os.environ, "PYTHONPATH": str(args.code.resolve())}
        server = subprocess.Popen(
            [sys.executable, __file__, "--server", str(port), str(Path(tmp) / "runs"),
             str(team), "--idle-unload", str(args.idle_unload),
             *(["--profile", str(Path(args.profile).resolve())] if args.profile else []),
             *([f"--turns-at-once={args.turns_at_once}"] if args.turns_at_once is not None
               else [])],
            env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(base + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            print(f"terrarium serve ({args.code.resolve()}), scripted echo team; server pid "
                  f"{server.pid}; {os.cpu_count()} CPUs (client and server share them)")
            anyio.run(client, base, [int(x) for x in args.sessions.split(",")], args.turns,
                      stored, args.fed, args.requests, args.repeats)
        finally:
            server.terminate()
            try:
                server.wait(120)  # unloading many sessions takes a while on a busy machine
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()
