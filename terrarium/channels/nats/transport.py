"""Channels on NATS JetStream: the transport for runs whose creatures live in many processes.

Per run and channel one stream (``naming``):

- ``queue``: a work-queue stream with ONE durable pull consumer that every listener of the
  channel (every replica of every listening creature, in any process) pulls from, so each
  message goes to exactly one of them;
- ``broadcast``: an interest stream with one durable consumer per listening creature (its
  replicas share it); a listener skips (acks) what it sent itself.

The hub validates, refuses and logs exactly as in one process; this transport then
publishes once, with the envelope id as ``Nats-Msg-Id``, so a message published again (a
turn re-run after a crash re-sends under the same id) is dropped by the broker.

Publishing is pipelined (:meth:`NatsTransport.publish_many`, in ``publishing.py``): the
messages of a batch go out without waiting for each other's PubAck, at most
``publish_window`` of this process's publishes awaiting their ack at a time, and a batch
returns only once every one of its messages is acked. A message the broker refused as full,
or whose ack did not come within ``publish_ack_wait``, is published again with its id (the
broker drops the repeat of one it stored) after the rest of its window settled; see
``docs/distributed.md`` for what that means for order.

A listener (:class:`NatsReceiver`, in ``receiver.py``) holds each message it took
(``in_progress`` heartbeats keep the broker from handing it to someone else) and acks it
only when the runtime says the turn's effects are recorded (:meth:`NatsTransport.ack`); a
process that dies stops heartbeating, so after ``ack_wait`` the broker redelivers its
messages to another replica.

The run's durable log is mirrored to a log stream (:meth:`NatsTransport.mirror`, the
``DurableLog.on_write`` hook): mirrored log records and acks leave in one ordered queue,
so a message is acked only after the records of the turn that consumed it are stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)

from terrarium.channels.envelope import Envelope
from terrarium.channels.nats.connect import connect_broker
from terrarium.channels.nats.naming import (
    QUEUE_CONSUMER,
    RUNS_STREAM,
    broadcast_consumer,
    channel_stream,
    channel_subject,
    log_stream,
    log_subject,
)
from terrarium.channels.nats.publishing import PUBLISH_ACK_WAIT, PUBLISH_WINDOW, PublishWindow
from terrarium.channels.nats.receiver import NatsReceiver
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.channels.transport import Delivered, Lane, Receiver, Transport
from terrarium.errors import RuntimeFailure

__all__ = ["NatsReceiver", "NatsTransport"]

logger = logging.getLogger("terrarium.channels.nats")

_LOG_BATCH_BYTES = 512_000  # under the default 1 MB max_payload


class NatsTransport(PublishWindow, Transport):
    """JetStream streams for one run; use as ``async with NatsTransport(url, run_id)``.

    ``provision`` (the process that starts the run) creates the streams and consumers;
    workers only bind to them. ``mirror_runs`` says whether this process's ``runs`` table
    writes (start, status) belong in the shared log: only the starting process's do.
    """

    brokered = True
    keeps_messages = True

    def __init__(self, url: str, run_id: str, *, provision: bool = True,
                 ack_wait: float = 30.0, prefetch: int = 1, source: str = "run",
                 mirror_runs: bool | None = None, storage: str = "file",
                 publish_window: int = PUBLISH_WINDOW,
                 publish_ack_wait: float = PUBLISH_ACK_WAIT) -> None:
        if publish_window < 1:
            raise RuntimeFailure(f"publish_window must be at least 1, not {publish_window}")
        self.url = url
        self.run_id = run_id
        self.provisioning = provision
        self.ack_wait = ack_wait
        self.prefetch = prefetch
        self.publish_window = publish_window
        self.publish_ack_wait = publish_ack_wait
        self.source = source
        self.mirror_runs = provision if mirror_runs is None else mirror_runs
        self.storage = StorageType.FILE if storage == "file" else StorageType.MEMORY
        self.nc: Client | None = None
        self._js: JetStreamContext | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._specs: dict[str, ChannelSpec] = {}
        self._listeners: dict[str, tuple[str, ...]] = {}
        self._wiring: dict[str, CreatureWiring] = {}
        self._receivers: dict[str, NatsReceiver] = {}
        self._out: deque[tuple[str, Any]] = deque()  # ordered: ("log", ops) | ("ack", ...)
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._idle = asyncio.Event()
        self._published = 0  # publishes by this process (the outstanding poll's freshness)
        self._poll: tuple[int, int, int] = (0, -1, 1)  # (seen publishes, previous, latest)
        self._polling = False
        self.lost_since: float | None = None  # monotonic time the broker connection dropped
        self._ack_prefix = ""
        self._acks: dict[str, asyncio.Future[str | None]] = {}  # reply token -> its PubAck
        self._ack_seq = 0
        self._room: anyio.Semaphore | None = None  # publishes awaiting their PubAck

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def js(self) -> JetStreamContext:
        if self._js is None:
            raise RuntimeFailure("the NATS transport is not connected")
        return self._js

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise RuntimeFailure("the NATS transport is not running")
        return self._tg

    async def __aenter__(self) -> NatsTransport:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        self.nc = await connect_broker(self.url, name=f"terrarium {self.source}",
                                       on_lost=self._lost, on_back=self._back)
        self._js = self.nc.jetstream(timeout=10)
        # the PubAcks of pipelined publishes come to one inbox of this process
        self._ack_prefix = self.nc.new_inbox() + "."
        self._room = anyio.Semaphore(self.publish_window)
        await self.nc.subscribe(self._ack_prefix + "*", cb=self._on_ack)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._drain)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        try:
            await self.flush(limit=5.0 if self.lost_since is None else 0.5)
        finally:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
                with contextlib.suppress(Exception):
                    await self._tg.__aexit__(None, None, None)
                self._tg = None
            if self.nc is not None:
                with contextlib.suppress(Exception):
                    await self.nc.close()

    async def _lost(self) -> None:
        if self.lost_since is None:
            self.lost_since = time.monotonic()

    async def _back(self) -> None:
        self.lost_since = None

    def lost_for(self) -> float:
        """Seconds since the connection to the broker dropped (0 while connected)."""
        return 0.0 if self.lost_since is None else time.monotonic() - self.lost_since

    async def start(self) -> None:
        """Create (provisioning) or check (joining) the run's streams and consumers."""
        if self.provisioning:
            await self._provision()
            return
        for name, spec in self._specs.items():
            stream = channel_stream(self.run_id, name)
            try:
                await self.js.stream_info(stream)
            except nats.js.errors.NotFoundError:
                raise RuntimeFailure(
                    f"run {self.run_id} has no stream for channel {name!r} on the broker",
                    suggestion="start the run first (`terrarium run PATH --broker URL`)",
                ) from None
            listeners = self._listeners[name]
            if listeners:  # heartbeat at the run's ack wait, whatever this process was told
                durable = broadcast_consumer(listeners[0]) if spec.kind == "broadcast" \
                    else QUEUE_CONSUMER
                info = await self.js.consumer_info(stream, durable)
                self.ack_wait = info.config.ack_wait or self.ack_wait

    async def _provision(self) -> None:
        js = self.js
        await _ensure_stream(js, StreamConfig(
            name=RUNS_STREAM, subjects=["trm.runs.>"], storage=self.storage,
            retention=RetentionPolicy.LIMITS))
        await _ensure_stream(js, StreamConfig(
            name=log_stream(self.run_id), subjects=[log_subject(self.run_id)],
            storage=self.storage, retention=RetentionPolicy.LIMITS))
        for name, spec in self._specs.items():
            listeners = self._listeners[name]
            broadcast = spec.kind == "broadcast"
            stream = channel_stream(self.run_id, name)
            await _ensure_stream(js, StreamConfig(
                name=stream, subjects=[channel_subject(self.run_id, name)],
                storage=self.storage,
                retention=RetentionPolicy.INTEREST if broadcast else RetentionPolicy.WORK_QUEUE,
                # backpressure as in one process: a full channel makes senders wait
                max_msgs=spec.capacity * (1 if broadcast else max(1, len(listeners))),
                discard=DiscardPolicy.NEW, duplicate_window=120.0))
            durables = [broadcast_consumer(c) for c in listeners] if broadcast \
                else ([QUEUE_CONSUMER] if listeners else [])
            for durable in durables:
                await js.add_consumer(stream, ConsumerConfig(
                    durable_name=durable, ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=self.ack_wait, max_ack_pending=-1))

    # -- Transport ---------------------------------------------------------------------

    def bind(self, specs: Mapping[str, ChannelSpec], wiring: Mapping[str, CreatureWiring],
             observers: Mapping[str, tuple[str, ...]] | None = None) -> None:
        for name, chans in (observers or {}).items():
            if chans:
                raise RuntimeFailure(
                    f"{type(self).__name__} routes by itself, so creature {name!r} cannot "
                    "observe channels there; observers need the in-process transport."
                )
        self._specs = dict(specs)
        listeners: dict[str, list[str]] = {name: [] for name in specs}
        for w in wiring.values():
            for ch in w.listen:
                listeners[ch].append(w.name)
        self._listeners = {k: tuple(v) for k, v in listeners.items()}
        self._wiring = dict(wiring)

    def open_inbox(self, creature: str, capacity: int) -> Receiver:
        if creature in self._receivers:
            raise RuntimeFailure(f"The inbox of creature {creature!r} is already open.")
        w = self._wiring.get(creature)
        listen = w.listen if w is not None else ()
        rec = NatsReceiver(self, creature, [
            (ch, self._specs[ch].kind == "broadcast") for ch in dict.fromkeys(listen)])
        self._receivers[creature] = rec
        return rec

    def inbox(self, creature: str) -> Receiver:
        try:
            return self._receivers[creature]
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    async def deliver(self, creature: str, envelope: Envelope) -> None:
        raise RuntimeFailure("the NATS transport routes by itself; the hub publishes")

    def lane(self, sender: str, spec: ChannelSpec, targets: Delivered,
             observers: tuple[str, ...] = ()) -> Lane:
        return _NatsLane(self, targets, spec.kind == "broadcast")

    async def ack(self, creature: str, message_ids: tuple[str, ...]) -> None:
        rec = self._receivers.get(creature)
        if rec is None:
            return
        for mid in message_ids:
            msg = rec.held.get(mid)
            if msg is not None:
                self._push(("ack", (rec, mid, msg)))

    def taken_over(self, creature: str, message_id: str) -> bool:
        rec = self._receivers.get(creature)
        return rec is not None and rec.taken_over(message_id)

    async def let_go(self, creature: str, message_id: str) -> None:
        rec = self._receivers.get(creature)
        if rec is not None:  # not acked: its new holder acks it, or the broker hands it on
            rec.forget(message_id)

    async def kept_ids(self) -> frozenset[str]:
        """The ids the run's channel streams still store (not yet acked by every listener,
        taken or not): the broker redelivers each of them by itself, a held one once its
        ``ack_wait`` passes, so a resumed run replays from its log only the rest."""
        kept: set[str] = set()
        for name in self._specs:
            stream = channel_stream(self.run_id, name)
            subject = channel_subject(self.run_id, name)
            try:
                info = await self.js.stream_info(stream)
            except nats.js.errors.NotFoundError:
                continue  # the broker lost the channel: the log has it all
            seq = max(1, info.state.first_seq)
            while info.state.messages:
                try:
                    msg = await self.js.get_msg(stream, seq=seq, subject=subject, next=True)
                except nats.js.errors.NotFoundError:
                    break  # past the last one
                with contextlib.suppress(ValueError):  # a malformed one is no message
                    kept.add(Envelope.from_json(msg.data or b"").id)
                seq = (msg.seq or seq) + 1
        return frozenset(kept)

    def outstanding(self) -> int:
        """Messages of this run not yet acked anywhere (as of the last poll, ~50 ms)."""
        if not self._polling and self._tg is not None:
            self._polling = True
            self._tg.start_soon(self._poll_outstanding)
        seen, previous, latest = self._poll
        if seen < self._published:  # a publish since the poll began: not settled
            return 1
        return max(previous, latest) + len(self._out)

    async def aclose(self) -> None:
        for rec in self._receivers.values():
            rec.close()

    # -- the ordered outgoing queue: mirrored log records and acks ----------------------

    def mirror(self, ops: Sequence[tuple[str, Sequence[tuple[Any, ...]]]]) -> None:
        """``DurableLog.on_write``: queue committed writes for the run's log stream."""
        if not self.mirror_runs:
            ops = [op for op in ops if not op[0].lstrip().upper().startswith(
                ("INSERT INTO RUNS", "UPDATE RUNS"))]
            if not ops:
                return
        self._push(("log", [(sql, [list(r) for r in rows]) for sql, rows in ops]))

    def _push(self, item: tuple[str, Any]) -> None:
        self._out.append(item)
        self._idle.clear()
        if self._wake is None or self._loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
        else:
            self._loop.call_soon_threadsafe(self._wake.set)

    async def flush(self, limit: float = 5.0) -> None:
        """Wait until every queued log record and ack has reached the broker."""
        if not self._out:
            return
        with anyio.move_on_after(limit):
            await self._idle.wait()

    async def _drain(self) -> None:
        assert self._wake is not None
        subject = log_subject(self.run_id)
        while True:
            if not self._out:
                self._idle.set()
                await self._wake.wait()
                self._wake.clear()
                continue
            kind, item = self._out[0]
            if kind == "ack":
                self._out.popleft()
                rec, mid, msg = item
                try:
                    await msg.ack()  # no round trip: a lost ack only means a re-run
                except Exception as exc:  # redelivered later: effects are idempotent
                    logger.warning("ack of %s failed: %s", mid, exc)
                rec.forget(mid)
                continue
            ops: list[Any] = []
            size = 0
            while self._out and self._out[0][0] == "log" and size < _LOG_BATCH_BYTES:
                part = self._out[0][1]
                ops.extend(part)
                size += sum(len(str(rows)) for _, rows in part)
                self._out.popleft()
            data = json.dumps({"src": self.source, "ops": ops},
                              separators=(",", ":"), default=str).encode()
            for attempt in range(5):
                try:
                    await self.js.publish(subject, data)
                    break
                except Exception as exc:
                    logger.warning("log mirror publish failed (%s), retrying", exc)
                    await anyio.sleep(0.2 * (attempt + 1))

    async def _poll_outstanding(self) -> None:
        js = self.js
        consumers: list[tuple[str, str]] = []
        for name, spec in self._specs.items():
            stream = channel_stream(self.run_id, name)
            if spec.kind == "broadcast":
                consumers += [(stream, broadcast_consumer(c)) for c in self._listeners[name]]
            elif self._listeners[name]:
                consumers.append((stream, QUEUE_CONSUMER))
        while True:
            seen = self._published
            total = 0
            for stream, durable in consumers:
                try:
                    info = await js.consumer_info(stream, durable)
                except Exception:
                    total += 1
                    continue
                total += (info.num_pending or 0) + (info.num_ack_pending or 0)
            self._poll = (seen, self._poll[2], total)
            await anyio.sleep(0.03)


class _NatsLane(Lane):
    """Publishes once; the broker picks the queue listener or fans a broadcast out. A queue
    message goes to whichever listener takes it first, so it names every candidate as one
    ``a|b`` receiver (one message, one eventual consumer)."""

    __slots__ = ("_broadcast", "_receivers", "_transport")

    def __init__(self, transport: NatsTransport, targets: Delivered, broadcast: bool) -> None:
        super().__init__(targets)
        self._transport = transport
        self._broadcast = broadcast
        self._receivers = targets if broadcast else ("|".join(targets),)

    async def publish(self, envelope: Envelope, wait_limit: float | None,
                      start: int = 0) -> Delivered:
        await self._transport.publish(envelope, self.targets, self._broadcast, wait_limit)
        return self._receivers

    def address(self, envelope: Envelope, look: bool = True) -> Delivered:
        return self._receivers

    async def publish_to(self, envelope: Envelope, receivers: Delivered,
                         wait_limit: float | None) -> Delivered:
        await self._transport.publish(envelope, self.targets, self._broadcast, wait_limit)
        return receivers

    async def publish_batch(self, envelopes: Sequence[Envelope],
                            receivers: Sequence[Delivered] | None,
                            wait_limit: float | None) -> list[Delivered]:
        """The batch pipelined (:meth:`NatsTransport.publish_many`)."""
        await self._transport.publish_many(envelopes, wait_limit)
        return list(receivers) if receivers is not None else [self._receivers] * len(envelopes)


async def _ensure_stream(js: JetStreamContext, config: StreamConfig) -> None:
    """Create the stream, or leave an existing one as it is (idempotent)."""
    try:
        await js.stream_info(config.name or "")
    except nats.js.errors.NotFoundError:
        await js.add_stream(config)
