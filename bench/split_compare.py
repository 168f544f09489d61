"""The hub split, side by side: bench/channels.py and bench/scale.py on the code before the
split and on this checkout, alternately, in one run, so machine load hits both alike.

    python bench/split_compare.py [--rounds 3] [--before 906cca8^]
        [--channels-args "--runs 1 --messages 20000 --log-messages 5000"]
        [--scale-args "--creatures 300 --runs 1 --broadcasts 10"]

The code before the split (``--before``, default the commit before the split 906cca8) is
checked out in a temporary git worktree, removed at the end. Each round runs both benches
on both trees, the tree that goes first alternating round by round; each tree runs its own
copy of the bench (they differ only in where ``compile_validator`` is imported from).
Printed: every figure's median over the rounds, before and after, and ``new/old``: the
speed of this checkout against the old code (above 1.00: faster now; for times and memory
it is old/new, so above 1.00 always means better).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPLIT = "906cca8"
BENCHES = ("channels", "scale")
# each bench measures a raw anyio baseline in the same process: the figures over it cancel
# most of what a busy machine does to one run and not the next
BASELINE = {"channels": "raw anyio memory stream (await send / async for), 1→1",
            "scale": "raw anyio fan-out p99, ms"}

# channels: "label: 12,345 msg/s" (the first lines) and "label   12,345   1.23x" (the table)
_RATE = re.compile(r"^(?P<label>.+?):\s+(?P<v>[\d,]+) msg/s")
_ROW = re.compile(r"^(?P<label>\S.*?)\s+(?P<v>[\d,]+)\s+[\d.]+x$")
_DELIVERIES = re.compile(r"\s*\([\d,]+ deliveries/s\)")
# scale: lower is better for every figure it prints
_SCALE = [
    ("RSS per creature (total/N), KB", re.compile(r"RSS per creature \(total/N\):\s+([\d.]+) KB")),
    ("load_team, ms", re.compile(r"load_team:\s+([\d.]+) ms")),
    ("start, ms", re.compile(r"start:\s+([\d.]+) ms")),
    ("broadcast send -> loop p50, ms", re.compile(r"broadcast latency send.*?p50 ([\d.]+) ms")),
    ("broadcast send -> loop p99, ms", re.compile(r"broadcast latency send.*?p99 ([\d.]+) ms")),
    ("raw anyio fan-out p99, ms", re.compile(r"raw anyio stream fan-out.*?p99 ([\d.]+) ms")),
]


def parse_channels(text: str) -> dict[str, float]:
    """msg/s by scenario (higher is better)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _RATE.match(line) or _ROW.match(line.rstrip())
        if m:
            label = _DELIVERIES.sub("", m["label"]).strip()
            out[label] = float(m["v"].replace(",", ""))
    return out


def parse_scale(text: str) -> dict[str, float]:
    """The scale figures (lower is better)."""
    out: dict[str, float] = {}
    for label, rx in _SCALE:
        if m := rx.search(text):
            out[label] = float(m[1])
    return out


def run_bench(tree: Path, bench: str, extra: str) -> str:
    """One bench on one tree: its own copy of the script, its own package first."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(tree / "bench" / f"{bench}.py"), *shlex.split(extra)]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{bench} failed on {tree}:\n{done.stderr[-2000:]}")
    return done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", default=f"{SPLIT}^", help="the old code (a git revision)")
    ap.add_argument("--channels-args", default="--runs 1 --messages 20000 --log-messages 5000")
    ap.add_argument("--scale-args", default="--creatures 300 --runs 1 --broadcasts 10")
    args = ap.parse_args()
    extra = {"channels": args.channels_args, "scale": args.scale_args}
    parse = {"channels": parse_channels, "scale": parse_scale}
    figures: dict[tuple[str, str, str], list[float]] = {}  # (bench, label, side) -> values
    rel: dict[tuple[str, str, str], list[float]] = {}  # the same over the run's baseline
    with tempfile.TemporaryDirectory(prefix="terrarium-split-") as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(old), args.before], check=True)
        try:
            for r in range(args.rounds):
                sides = [("old", old), ("new", ROOT)]
                if r % 2:
                    sides.reverse()
                for bench in BENCHES:
                    for side, tree in sides:
                        print(f"round {r + 1}/{args.rounds}: {bench} on {side}", file=sys.stderr,
                              flush=True)
                        got = parse[bench](run_bench(tree, bench, extra[bench]))
                        base = got.get(BASELINE[bench])
                        for label, v in got.items():
                            figures.setdefault((bench, label, side), []).append(v)
                            # the same figure over this run's own raw baseline (latencies
                            # and rates only: memory and start times have no baseline)
                            if base and (bench == "channels" or "broadcast" in label):
                                rel.setdefault((bench, label, side), []).append(v / base)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           check=False)
    report(figures, rel, args)


def report(figures: dict[tuple[str, str, str], list[float]],
           rel: dict[tuple[str, str, str], list[float]], args: argparse.Namespace) -> None:
    load = os.getloadavg()[0]
    print(f"hub split, before ({args.before}) vs this checkout: median of {args.rounds} "
          f"round(s), load average at the end {load:.1f}")
    print("new/old: the medians compared; vs base: each figure over its own run's raw anyio "
          "baseline first\n(steadier on a busy machine). Above 1.00: this checkout is better.")
    ratios: list[float] = []
    for bench in BENCHES:
        unit = "msg/s" if bench == "channels" else "value"
        print(f"\n{bench} ({extra_note(bench, args)})")
        print(f"  {'figure':<58} {'old':>10} {'new':>10} {'new/old':>8} {'vs base':>8}  ({unit})")
        labels = dict.fromkeys(label for (b, label, _) in figures if b == bench)
        for label in labels:
            o, n = figures.get((bench, label, "old")), figures.get((bench, label, "new"))
            if not o or not n:
                continue
            speed = _better(bench, statistics.median(o), statistics.median(n))
            ro, rn = rel.get((bench, label, "old")), rel.get((bench, label, "new"))
            steady = _better(bench, statistics.median(ro), statistics.median(rn)) \
                if ro and rn and label != BASELINE[bench] else float("nan")
            if steady == steady:  # not nan
                ratios.append(steady)
            print(f"  {label:<58} {statistics.median(o):>10,.1f} {statistics.median(n):>10,.1f} "
                  f"{speed:>7.2f}x {steady:>7.2f}x")
    if ratios:
        print(f"\nall figures over their baseline: median new/old "
              f"{statistics.median(ratios):.2f}x, lowest {min(ratios):.2f}x, "
              f"highest {max(ratios):.2f}x")


def _better(bench: str, old: float, new: float) -> float:
    """How much better the new figure is: rates new/old, times and memory old/new."""
    if not old or not new:
        return float("nan")
    return new / old if bench == "channels" else old / new


def extra_note(bench: str, args: argparse.Namespace) -> str:
    return args.channels_args if bench == "channels" else args.scale_args


if __name__ == "__main__":
    main()
