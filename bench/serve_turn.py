"""The server's CPU per input *and its turn*, with no HTTP: the turn is what is measured.

``bench/serve.py``'s echo team (scripted model) in a ``SessionManager`` of this process;
``--sessions`` sessions each get ``--inputs`` inputs one after another through
``SessionManager.send`` (what ``POST .../input`` calls), each awaited until its
``turn_ended`` event is committed, all sessions at once (the turns phase of
``bench/serve.py`` without its sockets, client and SSE). Clocked in process CPU
(``time.process_time``), which a busy machine disturbs far less than the wall clock: per
input, the lowest of ``--rounds`` rounds; SQLite transactions and rows per input.

Every run is its own process; with ``--code DIR`` the runs alternate between this checkout
and DIR (A B A B ...), so both versions see the same machine, and the medians are printed.

    python bench/serve_turn.py [--sessions 100] [--inputs 5] [--rounds 3] [--runs 3]
    python bench/serve_turn.py --code /work/base        # this checkout against another
    python bench/serve_turn.py --runs 1 --profile /tmp/turn.prof   # cProfile, last round
    python bench/serve_turn.py --instructions --sessions 10 --inputs 10 --code /work/base

``--instructions``: instead of the clock, the instructions per input counted by valgrind
(cachegrind), which a busy machine does not disturb at all: a run with ``--inputs`` inputs
a session less one with none (the start, the warm-up), over the inputs; one round.
"""

from __future__ import annotations

import argparse
import cProfile
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from channels_cost import valgrind_instructions
from serve import write_team  # the same team as bench/serve.py
from serve_input import count_writes

ROOT = Path(__file__).resolve().parent.parent


async def one_turn(mgr: Any, sid: str, text: str) -> None:
    """Send ``text`` to session ``sid`` of a ``SessionManager`` and wait for its turn's
    ``turn_ended`` event (loading the session first, as the API does)."""
    live = await mgr.load(sid)
    after = await mgr.send(live, text=text)
    events = mgr.events_of(sid)
    while True:
        rows = await events.wait(after)
        if any(kind == "turn_ended" for _, kind, _ in rows):
            return
        after = rows[-1][0]


async def child(sessions: int, inputs: int, rounds: int, profile: str | None) -> dict[str, Any]:
    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(load_team(write_team(Path(tmp) / "team")), ServeSettings(
            runs_dir=Path(tmp) / "runs", rate=1e6, warm_up=False, idle_unload=3600))
        mgr = app.state.manager
        async with anyio.create_task_group() as tg:
            await tg.start(mgr.run)
            ids = [mgr.create(None).id for _ in range(sessions)]

            async def closed(sid: str) -> None:
                for i in range(inputs):
                    await one_turn(mgr, sid, f"input {i}")

            for warm in ("warm", "warm again"):  # loads every session, imports, caches
                async with anyio.create_task_group() as g:
                    for sid in ids:
                        g.start_soon(one_turn, mgr, sid, warm)
            counts = count_writes(mgr.log)
            per: list[float] = []
            walls: list[float] = []
            for r in range(rounds):
                prof = cProfile.Profile(time.process_time) if profile and r == rounds - 1 else None
                cpu, wall = time.process_time(), time.perf_counter()
                if prof:
                    prof.enable()
                async with anyio.create_task_group() as g:
                    for sid in ids:
                        g.start_soon(closed, sid)
                if prof:
                    prof.disable()
                    prof.dump_stats(profile)
                done = max(1, sessions * inputs)  # (none: --instructions' baseline)
                per.append((time.process_time() - cpu) / done * 1000)
                walls.append((time.perf_counter() - wall) / done * 1000)
            tg.cancel_scope.cancel()
    n = max(1, sessions * inputs * rounds)
    return {"ms": min(per), "rounds": per, "wall": min(walls), "tx": counts["tx"] / n,
            "rows": counts["rows"] / n, "load": os.getloadavg()[0]}


def instructions(trees: list[Path], sessions: int, inputs: int) -> None:
    """Instructions per input and its turn, each tree (see the module's docstring)."""
    for tree in trees:
        os.environ["PYTHONPATH"] = str(tree)
        counts = [valgrind_instructions([__file__, "--child", "--sessions", str(sessions),
                                         "--inputs", str(n), "--rounds", "1"])
                  for n in (inputs, 0)]
        print(f"{tree}: {(counts[0] - counts[1]) / (sessions * inputs) / 1e6:.2f} million "
              f"instructions per input and its turn ({sessions} sessions x {inputs} inputs, "
              "valgrind cachegrind)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--inputs", type=int, default=5, help="inputs per session per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="processes per checkout")
    ap.add_argument("--code", type=Path, help="another checkout, run alternately with this one")
    ap.add_argument("--profile", metavar="FILE", help="cProfile (CPU) of each run's last round")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per input with valgrind instead of timing")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(anyio.run(child, args.sessions, args.inputs, args.rounds,
                                   args.profile)))
        return
    trees = [ROOT] + ([args.code.resolve()] if args.code else [])
    if args.instructions:
        instructions(trees, args.sessions, args.inputs)
        return
    got: dict[Path, list[dict[str, Any]]] = {t: [] for t in trees}
    print(f"{args.sessions} sessions x {args.inputs} inputs, best of {args.rounds} rounds a "
          f"run; server CPU per input and its turn (no HTTP); load {os.getloadavg()[0]:.1f}")
    for run in range(args.runs):
        for tree in trees:
            cmd = [sys.executable, __file__, "--child", "--sessions", str(args.sessions),
                   "--inputs", str(args.inputs), "--rounds", str(args.rounds)]
            if args.profile:
                cmd += ["--profile", f"{args.profile}.{len(got[tree])}"
                        + (".other" if tree != ROOT else "")]
            out = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(tree)},
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            got[tree].append(row)
            print(f"  run {run + 1} {tree}: {row['ms']:.2f} ms per input (rounds "
                  + " ".join(f"{x:.2f}" for x in row["rounds"])
                  + f"; wall {row['wall']:.2f} ms); transactions {row['tx']:.2f}, rows "
                  f"{row['rows']:.2f} per input; load {row['load']:.1f}", flush=True)
    for tree, rows in got.items():
        print(f"{tree}: median {statistics.median(r['ms'] for r in rows):.2f} ms per input "
              f"and its turn ({len(rows)} runs); rows per input {rows[-1]['rows']:.2f}")


if __name__ == "__main__":
    main()
