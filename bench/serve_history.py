"""What a served turn costs as its session grows: CPU per turn at 10 and 500 turns of history.

An echo creature on the scripted model that keeps its whole history (no ``history_turns``)
in a ``SessionManager`` of this process, one session: ``H`` turns made first (untimed), then
``--turns`` inputs one after another, each awaited until its ``turn_ended`` is committed,
clocked in process CPU (``time.process_time``, which a busy machine disturbs far less than
the clock; the lowest of ``--rounds`` rounds). Beside it, load-independent: the bytes of
conversation text a turn's commit writes (``histories`` rows and their parts) and all the
text it hands SQLite, per turn.

Every run is its own process; with ``--code DIR`` the runs alternate between this checkout
and DIR (A B A B ...), and the medians are printed.

    python bench/serve_history.py [--history 10,500] [--turns 50] [--rounds 3] [--runs 3]
    python bench/serve_history.py --code /work/main       # this checkout against another
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
import serve as served  # this folder's bench/serve.py (the script's folder is on the path)
from serve_turn import one_turn

ROOT = Path(__file__).resolve().parent.parent

# bench/serve.py's echo team, its creature keeping its whole history (no ``history_turns``)
TEAM = served.TEAM
CREATURE = served.CREATURE.replace("history_turns: 2\n", "")
assert CREATURE != served.CREATURE, "bench/serve.py's echo creature changed: see CREATURE"
SCRIPT = 'default_reply: "Heard you, and here is a reply of a usual length."\nchunk: 64\n'


def write_team(folder: Path) -> Path:
    (folder / "echo").mkdir(parents=True, exist_ok=True)
    (folder / "terrarium.yaml").write_text(TEAM)
    (folder / "echo" / "config.yaml").write_text(CREATURE)
    (folder / "echo" / "script.yaml").write_text(SCRIPT)
    return folder


def _text_of(ops: Any) -> tuple[int, int]:
    """(the conversation text: ``histories`` rows and parts; all text) in ``ops``."""
    conv = every = 0
    for sql, rows in ops:
        n = sum(len(v) for r in rows for v in r if isinstance(v, str))
        every += n
        if "histor" in sql and sql.lstrip().startswith("INSERT"):
            conv += n
    return conv, every


async def child(history: int, turns: int, rounds: int) -> dict[str, Any]:
    from terrarium.config import load_team
    from terrarium.serve import ServeSettings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(load_team(write_team(Path(tmp) / "team")), ServeSettings(
            runs_dir=Path(tmp) / "runs", rate=1e6, warm_up=False, idle_unload=3600))
        mgr = app.state.manager
        text = [0, 0]
        inner = mgr.log.write_batch

        def counted(ops: Any) -> None:
            ops = list(ops)
            c, e = _text_of(ops)
            text[0] += c
            text[1] += e
            inner(ops)

        mgr.log.write_batch = counted
        async with anyio.create_task_group() as tg:
            await tg.start(mgr.run)
            sid = mgr.create(None).id

            for i in range(history):  # the session's history, untimed
                await one_turn(mgr, sid,
                               f"an earlier input, number {i}, of a usual length for a chat")
            per: list[float] = []
            conv: list[float] = []
            every: list[float] = []
            for r in range(rounds):
                await mgr.flush()
                text[:] = [0, 0]
                cpu = time.process_time()
                for i in range(turns):
                    await one_turn(mgr, sid,
                                   f"input {r}.{i}, of a usual length for a chat message here")
                await mgr.flush()
                per.append((time.process_time() - cpu) / turns * 1000)
                conv.append(text[0] / turns)
                every.append(text[1] / turns)
            tg.cancel_scope.cancel()
    return {"ms": min(per), "rounds": per, "conv": statistics.median(conv),
            "text": statistics.median(every), "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", default="10,500", help="turns made before the timed ones")
    ap.add_argument("--turns", type=int, default=50, help="timed turns per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="processes per checkout and history")
    ap.add_argument("--code", type=Path, help="another checkout, run alternately with this one")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(anyio.run(child, args.child, args.turns, args.rounds)))
        return
    trees = [ROOT] + ([args.code.resolve()] if args.code else [])
    histories = [int(h) for h in args.history.split(",")]
    got: dict[tuple[Path, int], list[dict[str, Any]]] = {(t, h): [] for t in trees
                                                          for h in histories}
    print(f"one session, {args.turns} timed turns a round, best of {args.rounds}; server CPU "
          f"per input and its turn (no HTTP); load {os.getloadavg()[0]:.1f}")
    for _ in range(args.runs):
        for h in histories:
            for tree in trees:
                cmd = [sys.executable, __file__, "--child", str(h), "--turns", str(args.turns),
                       "--rounds", str(args.rounds)]
                out = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(tree)},
                                     capture_output=True, text=True, check=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                got[(tree, h)].append(row)
                print(f"  {tree} history {h}: {row['ms']:.3f} ms per turn; conversation text "
                      f"written {row['conv']:.0f} B, all text {row['text']:.0f} B per turn; "
                      f"load {row['load']:.1f}", flush=True)
    for (tree, h), rows in got.items():
        print(f"{tree} history {h:>4}: median {statistics.median(r['ms'] for r in rows):.3f} ms "
              f"per turn ({len(rows)} runs); conversation text {rows[-1]['conv']:.0f} B a turn")


if __name__ == "__main__":
    main()
