"""Channel throughput: messages per second through the hub vs raw anyio streams.

Prints first the limit a typed queue 1→1 can approach (an anyio ``send_nowait``-first loop
with the same pydantic validation) beside the typed queue, two ways (``await hub.send`` for
every message, and the limit's own pattern: ``hub.send_nowait``, awaiting ``hub.send`` only
when it raises ``WouldBlock``), interleaved run by run, and their ratios (``--quick``: only
these); then, for
queue and broadcast with 1 → 10 listeners, schema validation on and off, with
and without the durable log, the median of several runs and the ratio against a raw anyio
memory-object-stream baseline measured in the same run.

    python bench/channels.py [--runs 5] [--messages 50000] [--quick] [--cpu]

``--cpu``: rates from the process's CPU time instead of the wall clock (one thread does all
of it, so this is the same work measured without the time other processes take the core
away; on a busy shared machine the wall-clock ratios of one run scatter from 0.1 to 4).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict

from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring, DurableLog
from terrarium.channels.payload import compile_validator

clock = time.perf_counter  # time.process_time with --cpu


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    n: int = 0
    urgent: bool = False


PAYLOAD = {"text": "hello there", "n": 7}


async def raw_baseline(n: int) -> float:
    """One producer awaiting ``send``, one consumer iterating: plain anyio."""
    send, recv = anyio.create_memory_object_stream[dict](64)

    async def consume() -> None:
        async with recv:
            async for _ in recv:
                pass

    t = clock()
    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        async with send:
            for _ in range(n):
                await send.send(PAYLOAD)
    return n / (clock() - t)


async def limit_run(n: int) -> float:
    """The limit for a typed queue 1→1: a ``send_nowait``-first loop (await only when the
    buffer is full) over a plain anyio stream, the same pydantic validation per message,
    and a listener taking batches as the hub's does. No envelope, id, log or routing."""
    validate = compile_validator(Note)
    send, recv = anyio.create_memory_object_stream[dict](64)
    received = 0
    all_in = anyio.Event()

    async def consume() -> None:
        nonlocal received
        while True:
            await recv.receive()
            got = 1
            try:
                while got < 512:
                    recv.receive_nowait()
                    got += 1
            except anyio.WouldBlock:
                pass
            received += got
            if received >= n:
                all_in.set()
                return

    t = clock()
    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        nowait = send.send_nowait
        for _ in range(n):
            body = validate(PAYLOAD)
            try:
                nowait(body)
            except anyio.WouldBlock:
                await send.send(body)
        await all_in.wait()
    return n / (clock() - t)


async def hub_run(
    n: int,
    *,
    kind: str,
    listeners: int,
    validate: bool,
    log_path: Path | None = None,
    senders: int = 1,
    offload: bool = False,
    batch: int = 1,
    nowait: bool = False,
) -> float:
    spec = ChannelSpec(name="c", kind=kind, schema_name="note", validator=Note, capacity=64)
    wiring = [CreatureWiring(name=f"l{i}", listen=("c",)) for i in range(listeners)]
    wiring += [CreatureWiring(name=f"s{i}", can_send=("c",)) for i in range(senders)]
    log = DurableLog(log_path) if log_path else None
    hub = ChannelHub([spec], wiring, log=log, validate=validate, offload_log=offload)
    sent = (n // senders // batch) * batch * senders
    expected = sent if kind == "queue" else sent * listeners
    received = 0
    all_in = anyio.Event()

    async def listener(name: str) -> None:
        nonlocal received
        inbox = hub.subscribe(name)
        while True:
            batch = await inbox.receive_batch(512)  # await first: `+=` would race
            received += len(batch)
            if received >= expected:
                all_in.set()

    async def sender(name: str, count: int) -> None:
        if batch > 1:
            chunk = [PAYLOAD] * batch
            for _ in range(count // batch):
                await hub.send_many(name, "c", chunk)
            return
        send = hub.send
        if nowait:  # the limit's own pattern: send_nowait, await only when it cannot
            send_nowait = hub.send_nowait
            for _ in range(count):
                try:
                    send_nowait(name, "c", PAYLOAD)
                except anyio.WouldBlock:
                    await send(name, "c", PAYLOAD)
            return
        for _ in range(count):
            await send(name, "c", PAYLOAD)

    t = clock()
    async with hub, anyio.create_task_group() as tg:
        for i in range(listeners):
            tg.start_soon(listener, f"l{i}")
        async with anyio.create_task_group() as stg:
            for i in range(senders):
                stg.start_soon(sender, f"s{i}", n // senders)
        await all_in.wait()
        elapsed = clock() - t
        tg.cancel_scope.cancel()
    if log is not None:
        log.close()
    return (n // senders // batch) * batch * senders / elapsed


def median_rate(runs: int, fn: Callable[[], Awaitable[float]]) -> float:
    return statistics.median(anyio.run(fn) for _ in range(runs))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--log-messages", type=int, default=20_000)
    ap.add_argument("--quick", action="store_true",
                    help="only the limit and the typed queue 1→1 (issue 29, item 4)")
    ap.add_argument("--cpu", action="store_true",
                    help="rates from process CPU time, not the wall clock (a busy machine)")
    args = ap.parse_args()
    if args.cpu:
        global clock
        clock = time.process_time
    runs, n, nl = args.runs, args.messages, args.log_messages

    base = median_rate(runs, lambda: raw_baseline(n))
    print(f"raw anyio memory stream (await send / async for), 1→1: {base:>10,.0f} msg/s  (1.00x)")
    # the limit and the typed queue, interleaved run by run so machine load hits both alike
    limits, typed, nowaits = [], [], []
    for _ in range(runs):
        limits.append(anyio.run(lambda: limit_run(n)))
        typed.append(anyio.run(lambda: hub_run(n, kind="queue", listeners=1, validate=True)))
        nowaits.append(anyio.run(lambda: hub_run(n, kind="queue", listeners=1, validate=True,
                                                 nowait=True)))
    lim, tq, tn = statistics.median(limits), statistics.median(typed), statistics.median(nowaits)

    def each(rates: list[float]) -> str:
        return ", ".join(f"{r / li:.2f}" for r, li in zip(rates, limits, strict=True))

    print(f"limit: anyio send_nowait-first + same validation, 1→1: {lim:>10,.0f} msg/s")
    print(f"typed queue 1→1 (validate on), await hub.send each:    {tq:>10,.0f} msg/s  "
          f"({tq / lim:.2f}x of the limit; runs {each(typed)})")
    print(f"typed queue 1→1 (validate on), hub.send_nowait-first:  {tn:>10,.0f} msg/s  "
          f"({tn / lim:.2f}x of the limit; runs {each(nowaits)}; target >= 0.6x)")
    if args.quick:
        return
    print(f"{'scenario':<58} {'msg/s':>10} {'vs raw':>7}")

    def row(label: str, rate: float, unit: str = "msg/s") -> None:
        print(f"{label:<58} {rate:>10,.0f} {rate / base:>6.2f}x")

    for kind in ("queue", "broadcast"):
        for validate in (True, False):
            for listeners in (1, 2, 5, 10):
                rate = median_rate(
                    runs,
                    lambda k=kind, v=validate, li=listeners: hub_run(
                        n, kind=k, listeners=li, validate=v
                    ),
                )
                label = (
                    f"{kind:<9} validate={'on ' if validate else 'off'} listeners={listeners:<2}"
                )
                if kind == "broadcast":
                    label += f" ({rate * listeners:,.0f} deliveries/s)"
                row(label, rate)

    for kind in ("queue", "broadcast"):
        for listeners in (1, 10):
            rate = median_rate(
                runs,
                lambda k=kind, li=listeners: hub_run(
                    n, kind=k, listeners=li, validate=True, batch=64
                ),
            )
            row(f"{kind:<9} validate=on  listeners={listeners:<2} send_many(64)", rate)

    with tempfile.TemporaryDirectory() as tmp:
        for kind, listeners in (("queue", 1), ("queue", 10), ("broadcast", 10)):
            for senders, batch in ((1, 1), (32, 1), (1, 64), (8, 64)):
                for offload in (False, True):
                    rates = []
                    for r in range(runs):
                        db = Path(tmp) / f"{kind}-{listeners}-{senders}-{offload}-{r}.db"
                        rates.append(
                            anyio.run(
                                lambda db=db, k=kind, li=listeners, s=senders, o=offload, b=batch: (
                                    hub_run(
                                        nl,
                                        kind=k,
                                        listeners=li,
                                        validate=True,
                                        log_path=db,
                                        senders=s,
                                        offload=o,
                                        batch=b,
                                    )
                                )
                            )
                        )
                    label = (
                        f"{kind:<9} +log {'thread' if offload else 'inline'} "
                        f"senders={senders:<2} listeners={listeners:<2}"
                        + (f" send_many({batch})" if batch > 1 else "")
                    )
                    row(label, statistics.median(rates))


if __name__ == "__main__":
    main()
