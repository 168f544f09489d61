"""Instructions of the typed queue's parts one at a time, under valgrind (the figures of
docs/performance-history.md, "Typed queue, 2 December 2026"): each statement runs in a child
``valgrind --tool=cachegrind`` N times and 0 times; the difference over N is its cost,
with the loop's own (the ``pass`` row) included.

    python bench/channels_parts.py [--runs 20000] [--only id]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from channels_cost import valgrind_instructions  # bench/channels_cost.py, beside this

ROOT = Path(__file__).resolve().parent.parent

SETUP = f"""
import itertools, os, struct, time, anyio
from collections import deque
import sys; sys.path.insert(0, {str(ROOT)!r})
from terrarium.channels.envelope import Envelope, _TAG_BYTES, _next, _pack_id, _time_ns
from terrarium.channels.spec import SendResult
_tuple_new = tuple.__new__
ns = _time_ns(); p = {{"text": "x"}}; d = ("l",); M = 0xFFFFFFFF
env = Envelope.fresh("c", "s", "note", p)
F = "%016x" + _TAG_BYTES.hex() + "%08x"
s, r = anyio.create_memory_object_stream(10**8)
put, get = s.send_nowait, r.receive_nowait
buf = deque(); append, popleft = buf.append, buf.popleft
async def kw(a, b, c, *, d=None, e=None, f=-1.0, g=None, h=None): return 1
async def pos(a, b, c, d=None, e=None, f=-1.0, g=None, h=None): return 1
async def outer(fn):
    await fn(1, 2, 3)
def drive(fn):
    co = outer(fn)
    try: co.send(None)
    except StopIteration: pass
"""

PARTS = [
    ("pass", "loop", "pass"),
    ("clock", "time.time_ns()", "_time_ns()"),
    ("clock", "ts: ns / 1e9", "ns / 1e9"),
    ("clock", "time.time()", "time.time()"),
    ("id", "id: struct pack + bytes.hex (the hub's)",
     "_pack_id(ns, _TAG_BYTES, _next() & M).hex()"),
    ("id", "id: % formatting", "F % (ns, _next() & M)"),
    ("id", "id: f-string", "f'{ns:016x}{_TAG_BYTES.hex()}{_next() & M:08x}'"),
    ("id", "id: one 120-bit int and hex()", "hex((ns << 56) | (_next() & M))"),
    ("tuples", "plain 8-tuple", "(ns, 'c', 's', 'n', p, 1.0, None, None)"),
    ("tuples", "Envelope: tuple.__new__",
     "_tuple_new(Envelope, ('i', 'c', 's', 'n', p, 1.0, None, None))"),
    ("tuples", "SendResult: tuple.__new__", "_tuple_new(SendResult, (env, d))"),
    ("inbox", "anyio send_nowait + receive_nowait", "put(1); get()"),
    ("inbox", "deque append + popleft", "append(1); popleft()"),
    ("call", "await a coroutine, 5 keyword-only defaults", "drive(kw)"),
    ("call", "await a coroutine, 5 positional defaults", "drive(pos)"),
]


def count(stmt: str, n: int) -> int:
    code = f"{SETUP}\ndef _f(n):\n    for _ in range(n):\n        {stmt}\n_f(10)\n_f({n})\n"
    return valgrind_instructions(["-c", code])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--only", help="one group: " + ", ".join(sorted({g for g, _, _ in PARTS})))
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    for group, label, stmt in PARTS:
        if args.only and group not in (args.only, "pass"):
            continue
        per = (count(stmt, args.runs) - count(stmt, 0)) / args.runs
        print(f"  {label:<46} {per:>8,.0f}", flush=True)


if __name__ == "__main__":
    main()
