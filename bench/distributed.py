"""Channels through NATS JetStream between two processes, beside raw nats-py in the same run.

Starts a ``nats-server -js`` on a free port (or uses ``--broker URL``), then for each shape
runs a receiving process and a sending process:

- throughput: N messages on a queue channel, first send to last receive;
  *typed*: ``ChannelHub`` + ``NatsTransport`` on both sides (schema validation at send,
  one publish per message awaiting its PubAck, a pull consumer, an ack per message after
  ``mark_consumed``); *raw*: ``js.publish`` awaiting each PubAck and a pull consumer
  fetching and acking the same JSON bytes;
- latency: M messages sent one at a time every few milliseconds; send → listener
  (receive) time, p50 and p99, both ways (the two processes share the machine's clock);
- publish (issue 29, item 5): a sending process alone, first publish to last PubAck, four
  ways interleaved run by run: *raw serial* ``js.publish`` awaiting each PubAck; *raw
  pipelined* nats-py's own ``js.publish_async`` for every message, then
  ``publish_async_completed`` (nats-py's default window of 4,000); *typed send*
  ``hub.send`` one at a time (each awaits its ack); *typed batch* ``hub.send_many`` in
  batches of ``--batch`` (pipelined, ``--window`` publishes in flight).

    python bench/distributed.py [--messages 5000] [--latency 500] [--broker URL]
    python bench/distributed.py --publish-only [--publish-messages 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import anyio
from broker import nats_server
from pydantic import BaseModel, ConfigDict

from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring
from terrarium.channels.nats import NatsTransport, connect_broker
from terrarium.channels.nats.naming import QUEUE_CONSUMER

PAYLOAD = {"text": "hello there", "n": 7}
CAPACITY = 1_000_000


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    n: int = 0
    urgent: bool = False


def _hub(url: str, run_id: str, *, provision: bool, prefetch: int = 1, window: int = 64
         ) -> tuple[ChannelHub, NatsTransport]:
    spec = ChannelSpec(name="jobs", kind="queue", schema_name="note", validator=Note,
                       capacity=CAPACITY)
    wiring = [CreatureWiring(name="boss", can_send=("jobs",)),
              CreatureWiring(name="worker", listen=("jobs",))]
    transport = NatsTransport(url, run_id, provision=provision, prefetch=prefetch,
                              storage="file", publish_window=window)
    return ChannelHub([spec], wiring, transport=transport, run_id=run_id), transport


# ---------------------------------------------------------------------- the two roles
async def typed_receiver(url: str, run_id: str, n: int, prefetch: int) -> dict[str, Any]:
    hub, transport = _hub(url, run_id, provision=False, prefetch=prefetch)
    lat: list[float] = []
    async with transport, hub:
        await transport.start()
        inbox = hub.subscribe("worker")
        print("ready", flush=True)
        for _ in range(n):
            env = await inbox.receive()
            lat.append(time.time() - env.ts)
            await hub.mark_consumed("worker", env.id)
        end = time.time()
        await transport.flush()
    return {"end": end, "lat": lat}


async def typed_sender(url: str, run_id: str, n: int, gap: float) -> dict[str, Any]:
    hub, transport = _hub(url, run_id, provision=False)
    async with transport, hub:
        await transport.start()
        start = time.time()
        for i in range(n):
            await hub.send("boss", "jobs", {"text": "hello there", "n": i})
            if gap:
                await anyio.sleep(gap)
    return {"start": start}


async def raw_receiver(url: str, run_id: str, n: int, prefetch: int) -> dict[str, Any]:
    nc = await connect_broker(url)
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind(durable=QUEUE_CONSUMER, stream=f"RAW_{run_id}")
    print("ready", flush=True)
    lat: list[float] = []
    got = 0
    while got < n:
        try:
            msgs = await sub.fetch(prefetch, timeout=2)
        except TimeoutError:
            continue
        for m in msgs:
            body = json.loads(m.data)
            lat.append(time.time() - body["ts"])
            await m.ack()
            got += 1
    end = time.time()
    await nc.close()
    return {"end": end, "lat": lat}


async def raw_sender(url: str, run_id: str, n: int, gap: float) -> dict[str, Any]:
    nc = await connect_broker(url)
    js = nc.jetstream()
    start = time.time()
    for i in range(n):
        body = {"id": f"{i:030x}", "channel": "jobs", "sender": "boss", "schema_name": "note",
                "payload": {**PAYLOAD, "n": i}, "ts": time.time()}
        await js.publish(f"raw.{run_id}", json.dumps(body).encode(),
                         headers={"Nats-Msg-Id": body["id"]})
        if gap:
            await anyio.sleep(gap)
    await nc.close()
    return {"start": start}


def _raw_body(i: int) -> bytes:
    return json.dumps({"id": f"{i:030x}", "channel": "jobs", "sender": "boss",
                       "schema_name": "note", "payload": {**PAYLOAD, "n": i},
                       "ts": time.time()}).encode()


async def pub_raw_serial(url: str, run_id: str, n: int, extra: str) -> dict[str, Any]:
    nc = await connect_broker(url)
    js = nc.jetstream()
    start = time.perf_counter()
    for i in range(n):
        await js.publish(f"raw.{run_id}", _raw_body(i), headers={"Nats-Msg-Id": f"{i:030x}"})
    took = time.perf_counter() - start
    await nc.close()
    return {"rate": n / took}


async def pub_raw_pipelined(url: str, run_id: str, n: int, extra: str) -> dict[str, Any]:
    """nats-py's own pipelined JetStream publish: publish_async, then wait for every ack."""
    nc = await connect_broker(url)
    js = nc.jetstream()
    start = time.perf_counter()
    futures = [await js.publish_async(f"raw.{run_id}", _raw_body(i),
                                      headers={"Nats-Msg-Id": f"{i:030x}"})
               for i in range(n)]
    await js.publish_async_completed()
    took = time.perf_counter() - start
    assert all(f.done() and not f.cancelled() and f.exception() is None for f in futures)
    await nc.close()
    return {"rate": n / took}


async def pub_typed_send(url: str, run_id: str, n: int, extra: str) -> dict[str, Any]:
    hub, transport = _hub(url, run_id, provision=False)
    async with transport, hub:
        await transport.start()
        start = time.perf_counter()
        for i in range(n):
            await hub.send("boss", "jobs", {"text": "hello there", "n": i})
        took = time.perf_counter() - start
    return {"rate": n / took}


async def pub_typed_batch(url: str, run_id: str, n: int, extra: str) -> dict[str, Any]:
    batch, window = (int(x) for x in extra.split(","))
    hub, transport = _hub(url, run_id, provision=False, window=window)
    async with transport, hub:
        await transport.start()
        start = time.perf_counter()
        for k in range(0, n, batch):
            await hub.send_many("boss", "jobs", [{"text": "hello there", "n": i}
                                                 for i in range(k, min(n, k + batch))])
        took = time.perf_counter() - start
    return {"rate": n / took}


ROLES = {"typed-recv": typed_receiver, "typed-send": typed_sender,
         "raw-recv": raw_receiver, "raw-send": raw_sender,
         "pub-raw-serial": pub_raw_serial, "pub-raw-pipelined": pub_raw_pipelined,
         "pub-typed-send": pub_typed_send, "pub-typed-batch": pub_typed_batch}


# ---------------------------------------------------------------------- orchestration
async def provision(url: str, run_id: str) -> None:
    """The run's streams (typed) and a same-shaped raw stream with one pull consumer."""
    from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy, StreamConfig

    hub, transport = _hub(url, run_id, provision=True)
    async with transport, hub:
        await transport.start()
        await transport.js.add_stream(StreamConfig(
            name=f"RAW_{run_id}", subjects=[f"raw.{run_id}"],
            retention=RetentionPolicy.WORK_QUEUE, duplicate_window=120.0))
        await transport.js.add_consumer(f"RAW_{run_id}", ConsumerConfig(
            durable_name=QUEUE_CONSUMER, ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0))


def _spawn(role: str, url: str, run_id: str, n: int, extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--role", role, "--broker", url, "--run", run_id,
         "--messages", str(n), "--extra", extra],
        stdout=subprocess.PIPE, text=True, env={**os.environ})


def pair(kind: str, url: str, n: int, *, gap: float = 0.0, prefetch: int = 1
         ) -> dict[str, Any]:
    run_id = f"b{kind}{time.time_ns():x}"
    anyio.run(provision, url, run_id)
    recv = _spawn(f"{kind}-recv", url, run_id, n, str(prefetch))
    assert recv.stdout is not None
    line = recv.stdout.readline()
    assert line.strip() == "ready", line
    send = _spawn(f"{kind}-send", url, run_id, n, str(gap))
    s_out, _ = send.communicate(timeout=600)
    r_out, _ = recv.communicate(timeout=600)
    s, r = json.loads(s_out.splitlines()[-1]), json.loads(r_out.splitlines()[-1])
    lat = sorted(r["lat"])
    return {"rate": n / (r["end"] - s["start"]),
            "p50": lat[len(lat) // 2] * 1000, "p99": lat[int(len(lat) * 0.99)] * 1000}



def publish_once(kind: str, url: str, n: int, extra: str) -> float:
    """One sending process alone (``pub-<kind>``) on fresh streams: its messages/s."""
    run_id = f"p{time.time_ns():x}"
    anyio.run(provision, url, run_id)
    proc = _spawn(f"pub-{kind}", url, run_id, n, extra)
    out, _ = proc.communicate(timeout=600)
    return float(json.loads(out.splitlines()[-1])["rate"])


def publish_shape(url: str, args: argparse.Namespace) -> None:
    """Item 5: the typed channel's publishing against nats-py's own, interleaved."""
    kinds = {"raw-serial": args.messages, "raw-pipelined": args.publish_messages,
             "typed-send": args.messages, "typed-batch": args.publish_messages}
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.runs):
        for kind, n in kinds.items():
            rates[kind].append(publish_once(kind, url, n, f"{args.batch},{args.window}"))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"publish, one sending process alone, first publish -> last PubAck "
          f"(median of {args.runs}; each run's ratio in brackets):")
    labels = {"raw-serial": "raw nats-py js.publish, awaiting each PubAck",
              "raw-pipelined": "raw nats-py js.publish_async (pipelined, window 4000)",
              "typed-send": "typed hub.send, awaiting each ack",
              "typed-batch": f"typed hub.send_many({args.batch}), window {args.window}"}
    for k, label in labels.items():
        print(f"  {label:<56} {med[k]:>9,.0f} msg/s")
    pairs = [f"{t / r:.2f}" for t, r in zip(rates["typed-batch"], rates["raw-pipelined"],
                                             strict=True)]
    print(f"  typed batch / raw pipelined: {med['typed-batch'] / med['raw-pipelined']:.2f}x "
          f"({', '.join(pairs)}; target >= 0.5x)")
    print(f"  typed send / raw serial:     {med['typed-send'] / med['raw-serial']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--latency", type=int, default=500, help="messages for the latency run")
    ap.add_argument("--gap", type=float, default=0.002, help="seconds between latency sends")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--prefetch", type=int, default=1, help="messages a listener fetches "
                    "at a time, both ways (1: one by one, how replicas share a queue)")
    ap.add_argument("--publish-messages", type=int, default=20000,
                    help="messages for the pipelined publish runs")
    ap.add_argument("--batch", type=int, default=1000, help="send_many batch size")
    ap.add_argument("--window", type=int, default=64,
                    help="the typed transport's publish_window")
    ap.add_argument("--publish-only", action="store_true",
                    help="only the publish comparison (item 5)")
    ap.add_argument("--broker", help="use this broker instead of starting nats-server")
    ap.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--extra", default="0", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role:  # a child process: run one side, print its figures as JSON
        fn: Any = ROLES[args.role]
        extra: Any = (args.extra if args.role.startswith("pub-") else
                      float(args.extra) if args.role.endswith("send") else int(args.extra))
        print(json.dumps(anyio.run(fn, args.broker, args.run, args.messages, extra)))
        return
    with nats_server(args.broker) as url:
        if args.publish_only:
            publish_shape(url, args)
            return
        print(f"broker {url}; {args.messages} messages x {args.runs} runs (median), "
              f"prefetch {args.prefetch}, "
              f"latency over {args.latency} sends {args.gap * 1000:g} ms apart")
        rates: dict[str, list[float]] = {"typed": [], "raw": []}
        for _ in range(args.runs):  # interleaved, so both see the same machine
            for kind in ("raw", "typed"):
                rates[kind].append(pair(kind, url, args.messages,
                                        prefetch=args.prefetch)["rate"])
        raw, typed = statistics.median(rates["raw"]), statistics.median(rates["typed"])
        print(f"throughput  raw nats-py JetStream publish+pull  {raw:>9,.0f} msg/s")
        print(f"throughput  typed channel (hub + NatsTransport)  {typed:>9,.0f} msg/s"
              f"   ratio {typed / raw:.2f}x raw")
        for kind in ("raw", "typed"):
            r = pair(kind, url, args.latency, gap=args.gap)
            print(f"latency     {kind:<5} send -> listener  p50 {r['p50']:.2f} ms"
                  f"  p99 {r['p99']:.2f} ms")
        publish_shape(url, args)


if __name__ == "__main__":
    main()
