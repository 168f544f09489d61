"""Scale: 1,000 idle creatures on the scripted model — start time, RSS, broadcast latency.

Each measurement runs in a fresh child process (so allocator reuse from an earlier team
cannot hide memory), and the parent prints the median of several runs. Figures:

- start time: ``load_team`` + ``TeamRuntime.__aenter__`` (assembly, prompt builders, hub,
  inboxes, creature tasks) for N creatures; baseline: the same for a 10-creature team.
- RSS: resident set from /proc/self/statm, read in the child before the team is loaded
  (the baseline: interpreter + imports) and once the team is running and idle. Per creature
  is reported both as (running − baseline) / N and as the marginal cost between N and 10.
- broadcast latency: the user sends on one broadcast channel every creature listens to;
  latency is the time from ``send`` to each creature's loop receiving the envelope (turns are
  replaced by a recorder, so nothing else competes). Baseline: the same fan-out over raw
  anyio memory object streams with one task per receiver, measured in the same child.

    python bench/scale.py [--creatures 1000] [--runs 3] [--broadcasts 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Resident set size of this process, from /proc (no psutil here)."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * PAGE


def write_team(folder: Path, n: int) -> Path:
    """One shared creature config; n entries that all listen on one broadcast channel."""
    idle = folder / "idle"
    idle.mkdir(parents=True)
    # the prefix lists all N-1 teammates (~4 tokens each), so the window must hold them
    (idle / "config.yaml").write_text(
        "name: idle\n"
        "controller: {provider: scripted, script: script.yaml, context_window: 65536}\n",
        encoding="utf-8")
    (idle / "script.yaml").write_text('default_reply: "ok"\n', encoding="utf-8")
    lines = ["terrarium:", "  name: crowd", "  input_channel: all", "  creatures:"]
    for i in range(n):
        lines.append(f"    - {{name: c{i:04d}, config: idle, channels: {{listen: [all]}}}}")
    lines += ["  channels:",
              "    all: {type: broadcast, schema: {fields: {text: str}}, capacity: 16}"]
    (folder / "terrarium.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def raw_fanout(n: int, broadcasts: int) -> list[float]:
    """Baseline: one sender, n receiver tasks on plain anyio streams (no log, no validation)."""
    lat: list[float] = []
    streams = [anyio.create_memory_object_stream[float](16) for _ in range(n)]
    got = 0
    all_in = anyio.Event()

    async def receive(recv: Any) -> None:
        nonlocal got, all_in
        async with recv:
            async for t0 in recv:
                lat.append(time.perf_counter() - t0)
                got += 1
                if got == n:
                    all_in.set()

    async with anyio.create_task_group() as tg:
        for _, recv in streams:
            tg.start_soon(receive, recv)
        for _ in range(broadcasts):
            got, all_in = 0, anyio.Event()
            t0 = time.perf_counter()
            for send, _ in streams:
                send.send_nowait(t0)  # buffers have room, as the hub's fast path assumes
            await all_in.wait()
        for send, _ in streams:
            await send.aclose()
    return lat


async def measure(n: int, broadcasts: int) -> dict[str, Any]:
    from terrarium.config import load_team
    from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

    tmp = Path(tempfile.mkdtemp(prefix="terrarium-scale-"))
    folder = write_team(tmp / "team", n)
    base_rss = rss_bytes()
    t = time.perf_counter()
    team = load_team(folder)
    load_s = time.perf_counter() - t
    rt = TeamRuntime(team, RuntimeOptions(runs_dir=tmp / "runs", audio="none"))
    lat: list[float] = []
    sent_at = 0.0
    got = 0
    all_in = anyio.Event()

    async def record(c: Any, env: Any) -> None:  # replaces a turn: just note the arrival
        nonlocal got
        lat.append(time.perf_counter() - sent_at)
        got += 1
        if got == n:
            all_in.set()

    t = time.perf_counter()
    async with rt:
        start_s = time.perf_counter() - t
        # each creature loop looks its turn up per message, so this lands before the first
        rt._supervisor._supervised_turn = record  # type: ignore[union-attr,method-assign]
        await anyio.sleep(0.2)  # let every creature loop reach its inbox
        idle_rss = rss_bytes()
        for _ in range(broadcasts):
            got, all_in = 0, anyio.Event()
            sent_at = time.perf_counter()
            await rt.send_user("hello everyone")
            with anyio.fail_after(60):
                await all_in.wait()
    raw = await raw_fanout(n, broadcasts)
    return {
        "n": n, "load_s": load_s, "start_s": start_s, "base_rss": base_rss,
        "idle_rss": idle_rss, "lat_p50": pct(lat, 0.5), "lat_p99": pct(lat, 0.99),
        "raw_p50": pct(raw, 0.5), "raw_p99": pct(raw, 0.99), "samples": len(lat),
    }


def child(n: int, broadcasts: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n), "--broadcasts", str(broadcasts)],
        capture_output=True, text=True, check=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--creatures", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--broadcasts", type=int, default=20)
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(anyio.run(measure, args.child, args.broadcasts)))
        return
    n, small = args.creatures, 10
    big_runs: list[dict[str, Any]] = []
    small_runs: list[dict[str, Any]] = []
    for _ in range(args.runs):  # interleaved so machine load hits both alike
        small_runs.append(child(small, args.broadcasts))
        big_runs.append(child(n, args.broadcasts))

    def med(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    kb = 1024
    per_total = statistics.median((r["idle_rss"] - r["base_rss"]) / n for r in big_runs)
    marginal = statistics.median(
        ((b["idle_rss"] - b["base_rss"]) - (s["idle_rss"] - s["base_rss"])) / (n - small)
        for b, s in zip(big_runs, small_runs, strict=True))
    print(f"scale: {n} idle creatures on the scripted model, median of {args.runs} runs "
          f"(fresh process each), {args.broadcasts} broadcasts")
    print(f"  baseline RSS (interpreter + imports, before the team): "
          f"{med(big_runs, 'base_rss') / kb / kb:8.1f} MB")
    print(f"  RSS with {n} creatures running idle:                 "
          f"{med(big_runs, 'idle_rss') / kb / kb:8.1f} MB")
    print(f"  RSS per creature (total/N):     {per_total / kb:8.1f} KB   (target <= 100 KB)")
    print(f"  RSS per creature (marginal {small}->{n}): {marginal / kb:6.1f} KB")
    ls, lb = med(small_runs, "load_s"), med(big_runs, "load_s")
    ss, sb = med(small_runs, "start_s"), med(big_runs, "start_s")
    print(f"  load_team:  {lb * 1e3:8.1f} ms for {n}  vs {ls * 1e3:7.1f} ms for {small} "
          f"(x{lb / ls:.0f}; {(lb - ls) / (n - small) * 1e6:.0f} us per creature)")
    print(f"  start:      {sb * 1e3:8.1f} ms for {n}  vs {ss * 1e3:7.1f} ms for {small} "
          f"(x{sb / ss:.0f}; {(sb - ss) / (n - small) * 1e6:.0f} us per creature)")
    p50, p99 = med(big_runs, "lat_p50"), med(big_runs, "lat_p99")
    r50, r99 = med(big_runs, "raw_p50"), med(big_runs, "raw_p99")
    print(f"  broadcast latency send -> creature loop, {n} receivers: "
          f"p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms")
    print(f"  raw anyio stream fan-out baseline (same process):     "
          f"p50 {r50 * 1e3:.2f} ms, p99 {r99 * 1e3:.2f} ms  "
          f"(ratio p50 x{p50 / r50:.1f}, p99 x{p99 / r99:.1f}; target p99 <= x3)")
    s50 = med(small_runs, "lat_p50")
    print(f"  broadcast latency with {small} receivers: p50 {s50 * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
