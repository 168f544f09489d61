"""The in-process transport: one bounded anyio memory object stream per creature, and the
routing between them (a queue's round-robin, a broadcast's fan-out, observers' copies).

Every lane looks its inboxes' puts up once, so a send that finds room costs one plain call
per receiver: no await, no task, no copy (envelopes are immutable and shared).

Semantics
- ``queue``: exactly one listener gets each message. Listeners are served round-robin,
  skipping a listener whose inbox is full; when all are full the sender waits on the
  listener whose turn it is. Round-robin keeps the split even among busy listeners while
  skip-if-full lets an idle one absorb a burst.
- ``broadcast``: every listener except the sender gets the same envelope; the sender
  waits on each full inbox in turn.
- A wait that runs out is a ``ChannelRefusal`` naming who already got the message.
- Observers get a copy that never makes the sender wait: a full observer misses it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from itertools import repeat, starmap

import anyio
from anyio.streams.memory import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
)

from terrarium.channels.envelope import Envelope
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.channels.transport import ENDED, Delivered, Lane, Receiver, Transport
from terrarium.errors import ChannelRefusal, RuntimeFailure

logger = logging.getLogger("terrarium.channels")

Put = Callable[[Envelope], None]  # a stream's send_nowait: raises anyio.WouldBlock when full
Wait = Callable[[Envelope], Awaitable[None]]  # a stream's send: waits while it is full


def _buffer_of(stream: object) -> deque[Envelope] | None:
    """The memory stream's buffer when anyio's stream state has the shape this module
    knows (anyio 4: ``_state`` with ``buffer``, ``max_buffer_size``, ``waiting_receivers``,
    ``waiting_senders``, ``open_*_channels``); None otherwise, and the public methods do
    everything. Why reach in at all: anyio's ``send_nowait`` and ``receive_nowait`` are
    each a Python call of several attribute chains a message, a third of the typed queue's
    cost beside the envelope (docs/performance-history.md, "Typed queue, 2 December 2026")."""
    state = getattr(stream, "_state", None)
    buf = getattr(state, "buffer", None)
    if type(buf) is not deque or not all(
        hasattr(state, a) for a in ("max_buffer_size", "waiting_receivers",
                                    "waiting_senders", "open_receive_channels")
    ) or not hasattr(stream, "_closed"):
        return None
    return buf


def fast_put(stream: MemoryObjectSendStream[Envelope]) -> Put:
    """The stream's ``send_nowait``, with its common case inline: nobody waiting to
    receive, room in the buffer, both ends open: append to the buffer. Every other case
    (a receiver waiting for the item, a full buffer, a closed end) is the stream's own
    ``send_nowait``, so the result and the errors are the same."""
    buf = _buffer_of(stream)
    if buf is None:
        return stream.send_nowait
    state = stream._state
    slow = stream.send_nowait
    append = buf.append
    waiting = state.waiting_receivers
    cap = state.max_buffer_size

    def put(envelope: Envelope) -> None:
        if waiting or len(buf) >= cap or stream._closed or not state.open_receive_channels:
            slow(envelope)
        else:
            append(envelope)

    return put


class LocalReceiver(Receiver):
    """A creature's inbox backed by the receive side of a memory object stream."""

    def __init__(self, creature: str, stream: MemoryObjectReceiveStream[Envelope],
                 room: list[int] | None = None) -> None:
        super().__init__(creature)
        self._stream = stream
        self._buf = _buffer_of(stream)  # taken in bulk by receive_batch (see there)
        self._room = room  # the lanes' ``Direct`` room: 0 once closed (see close)

    def _receive_live_nowait(self) -> Envelope:
        return self._stream.receive_nowait()

    async def receive_batch(self, max_items: int = 256) -> list[Envelope]:
        """As :meth:`Receiver.receive_batch`, taking from the stream's buffer directly."""
        first = await self.receive()
        out = [first]
        buf = self._buf
        if buf and not self._replay:
            # the buffer in one C step: what anyio's receive_nowait would give one by one,
            # in the same order (a waiting sender's item comes after the buffer, below)
            if len(buf) < max_items:
                out += buf
                buf.clear()
            else:
                out += starmap(buf.popleft, repeat((), max_items - 1))
        # replayed envelopes (resume) first, through the generic path; then what waiting
        # senders hold (anyio's receive_nowait moves each into the buffer, waking it)
        nowait = self.receive_nowait if self._replay else self._stream.receive_nowait
        append = out.append
        try:
            for _ in range(max_items - len(out)):
                append(nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            pass
        return out

    async def _receive_live(self) -> Envelope:
        try:
            return await self._stream.receive()
        except anyio.ClosedResourceError:  # closed by the hub while waiting: the end
            raise anyio.EndOfStream from None

    def pending(self) -> int:
        return self._stream.statistics().current_buffer_used + len(self._replay)

    def close(self) -> None:
        """The hub closed (its senders first): what is still buffered stays readable, then
        the end, as before; the stream itself is closed now, not left to the collector."""
        stream = self._stream
        rest = self._replay
        if self._room is not None:  # no lane appends directly any more (see Direct)
            self._room[0] = 0
        while True:
            try:
                rest.append(stream.receive_nowait())
            except anyio.WouldBlock:
                return  # a sender is still open: the stream stays as it is
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                break
        stream.close()
        self._stream = ENDED  # type: ignore[assignment]
        self._buf = None


async def _wait_put(env: Envelope, target: str, already: Delivered,
                    wait_limit: float | None, wait: Wait) -> None:
    """Put ``env`` in ``target``'s full inbox, waiting for room at most ``wait_limit``
    seconds. An unbounded wait opens no cancel scope: it is the common case under load (a
    fast sender waits here once per inbox-full of messages)."""
    if wait_limit is None:
        await wait(env)
        return
    try:
        with anyio.fail_after(wait_limit):
            await wait(env)
    except TimeoutError:
        got = ", ".join(already) if already else "nobody"
        raise ChannelRefusal(
            f"The inbox of {target!r} stayed full for {wait_limit:g}s, so message {env.id} on "
            f"channel {env.channel!r} was not delivered to it (delivered to {got})."
        ) from None


def _room(stats: MemoryObjectStreamStatistics) -> bool:
    return stats.tasks_waiting_receive > 0 or stats.current_buffer_used < stats.max_buffer_size


def _has_room(stream: MemoryObjectSendStream[Envelope]) -> bool:
    return _room(stream.statistics())


def _takes_now(stream: MemoryObjectSendStream[Envelope]) -> bool:
    """Whether a put into ``stream`` succeeds now: room (or a receiver waiting for it),
    and its inbox open."""
    stats = stream.statistics()
    return stats.open_receive_streams > 0 and _room(stats)


class _LocalLane(Lane):
    """What every in-process lane shares: its inboxes' puts, looked up once, and the taps."""

    __slots__ = ("_missed", "_one", "_ones", "_ports", "_puts", "_stream_of", "_streams",
                 "_tap_puts", "_wait", "_waits", "rr")

    def __init__(self, targets: Delivered, streams: tuple[MemoryObjectSendStream[Envelope], ...],
                 taps: tuple[tuple[str, Put], ...], missed: dict[str, int]) -> None:
        super().__init__(targets, tuple(name for name, _ in taps))
        self._streams = streams
        self._puts: tuple[Put, ...] = tuple(fast_put(s) for s in streams)
        self._waits: tuple[Wait, ...] = tuple(s.send for s in streams)
        self._ports = dict(zip(targets, zip(self._puts, self._waits, strict=True), strict=True))
        self._stream_of = dict(zip(targets, streams, strict=True))
        self._tap_puts = taps
        self._missed = missed
        self._one = self._puts[0] if self._puts else None  # the first (a 1-listener queue's)
        self._wait = self._waits[0] if self._waits else None
        self._ones = tuple((t,) for t in targets)  # a queue send's result, made once
        self.rr = 0  # whose turn it is (a queue of several listeners)

    def address(self, envelope: Envelope, look: bool = True) -> Delivered:
        return self.targets

    async def publish_to(self, envelope: Envelope, receivers: Delivered,
                         wait_limit: float | None) -> Delivered:
        for k, t in enumerate(receivers):
            put, wait = self._ports[t]
            try:
                put(envelope)
            except anyio.WouldBlock:
                await _wait_put(envelope, t, receivers[:k], wait_limit, wait)
        return receivers

    def can_take(self, receivers: Delivered) -> bool:
        streams = self._stream_of
        return all(_takes_now(streams[t]) for t in receivers)

    def put_to(self, envelope: Envelope, receivers: Delivered) -> None:
        for t in receivers:
            self._ports[t][0](envelope)

    def tap(self, envelope: Envelope) -> None:
        for name, put in self._tap_puts:
            try:
                put(envelope)
            except anyio.WouldBlock:
                self._missed[name] += 1
                logger.warning(
                    "observer %s missed message %s on %s: its inbox is full (%d missed)",
                    name, envelope.id, envelope.channel, self._missed[name],
                )


class _OneListener(_LocalLane):
    """A queue with one listener (the common case: no round-robin to keep)."""

    __slots__ = ()

    def __init__(self, targets: Delivered, streams: tuple[MemoryObjectSendStream[Envelope], ...],
                 taps: tuple[tuple[str, Put], ...], missed: dict[str, int],
                 room: list[int] | None = None) -> None:
        super().__init__(targets, streams, taps, missed)
        self.put = self._one  # the inbox's own send_nowait: the hub calls it directly
        buf = _buffer_of(streams[0])
        if buf is not None and room is not None:  # and appends inline while there is room
            self.direct = (buf, room, streams[0]._state.waiting_receivers)

    def publish_nowait(self, envelope: Envelope) -> Delivered | int:
        try:
            self._one(envelope)
        except anyio.WouldBlock:
            return 0
        return self.targets

    async def publish(self, envelope: Envelope, wait_limit: float | None,
                      start: int = 0) -> Delivered:
        await _wait_put(envelope, self.targets[0], (), wait_limit, self._wait)
        return self.targets

    def publish_all_nowait(self, envelope: Envelope) -> Delivered:
        self._one(envelope)  # raises WouldBlock when full
        return self.targets


class _RoundRobin(_LocalLane):
    """A queue with several listeners: the first inbox with room from the one whose turn it
    is; when all are full, wait on that one."""

    __slots__ = ()

    def publish_nowait(self, envelope: Envelope) -> Delivered | int:
        puts = self._puts
        n = len(puts)
        i = self.rr
        for _ in range(n):
            try:
                puts[i](envelope)
            except anyio.WouldBlock:
                i = i + 1 if i + 1 < n else 0
                continue
            self.rr = i + 1 if i + 1 < n else 0
            return self._ones[i]
        return 0

    def publish_all_nowait(self, envelope: Envelope) -> Delivered:
        got = self.publish_nowait(envelope)
        if type(got) is not tuple:
            raise anyio.WouldBlock
        return got

    async def publish(self, envelope: Envelope, wait_limit: float | None,
                      start: int = 0) -> Delivered:
        got = self.publish_nowait(envelope)
        if type(got) is tuple:
            return got
        i = self.rr
        self.rr = i + 1 if i + 1 < len(self._puts) else 0
        await _wait_put(envelope, self.targets[i], (), wait_limit, self._waits[i])
        return self._ones[i]

    def address(self, envelope: Envelope, look: bool = True) -> Delivered:
        """The first listener with room from the one whose turn it is (``look=False``: the
        one whose turn it is); the turn moves past it."""
        n = len(self.targets)
        start = self.rr
        if look:
            for k in range(n):
                i = (start + k) % n
                if _has_room(self._streams[i]):
                    self.rr = (i + 1) % n
                    return self._ones[i]
        self.rr = (start + 1) % n
        return self._ones[start]


class _Broadcast(_LocalLane):
    """A broadcast: the one shared envelope into every inbox with room, no task and no
    copy per receiver; the sender waits only on a full inbox, in receiver order."""

    __slots__ = ()

    def publish_nowait(self, envelope: Envelope) -> Delivered | int:
        k = 0
        for put in self._puts:
            try:
                put(envelope)
            except anyio.WouldBlock:
                return k
            k += 1
        return self.targets

    def publish_all_nowait(self, envelope: Envelope) -> Delivered:
        if not all(_has_room(s) for s in self._streams):  # nobody, or everybody
            raise anyio.WouldBlock
        for put in self._puts:
            put(envelope)
        return self.targets

    async def publish(self, envelope: Envelope, wait_limit: float | None,
                      start: int = 0) -> Delivered:
        targets = self.targets
        waits = self._waits
        puts = self._puts
        for k in range(start, len(puts)):
            try:
                puts[k](envelope)
            except anyio.WouldBlock:
                await _wait_put(envelope, targets[k], targets[:k], wait_limit, waits[k])
        return targets


class LocalTransport(Transport):
    """Inboxes in this process; the zero-copy default (envelopes are shared, immutable)."""

    def __init__(self) -> None:
        self._senders: dict[str, MemoryObjectSendStream[Envelope]] = {}
        self._receivers: dict[str, LocalReceiver] = {}
        self._missed: dict[str, int] = {}
        # each inbox's room for the lanes' direct appends (see ``Direct``): its capacity
        # while open, 0 once the transport or the receiver closed it
        self._rooms: dict[str, list[int]] = {}

    def bind(self, specs: Mapping[str, ChannelSpec], wiring: Mapping[str, CreatureWiring],
             observers: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self._missed = dict.fromkeys(observers or {}, 0)

    @property
    def observer_missed(self) -> dict[str, int]:
        return self._missed

    def lane(self, sender: str, spec: ChannelSpec, targets: Delivered,
             observers: tuple[str, ...] = ()) -> Lane:
        streams = tuple(self._stream(t) for t in targets)
        taps = tuple((o, fast_put(self._stream(o))) for o in observers)
        if spec.kind == "broadcast":
            return _Broadcast(targets, streams, taps, self._missed)
        if len(targets) == 1:
            return _OneListener(targets, streams, taps, self._missed, self._rooms[targets[0]])
        return _RoundRobin(targets, streams, taps, self._missed)

    def _stream(self, creature: str) -> MemoryObjectSendStream[Envelope]:
        try:
            return self._senders[creature]
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    def open_inbox(self, creature: str, capacity: int) -> Receiver:
        if creature in self._receivers:
            raise RuntimeFailure(f"The inbox of creature {creature!r} is already open.")
        send, recv = anyio.create_memory_object_stream[Envelope](capacity)
        self._senders[creature] = send
        room = self._rooms[creature] = [capacity]
        rec = LocalReceiver(creature, recv, room)
        self._receivers[creature] = rec
        return rec

    def inbox(self, creature: str) -> Receiver:
        try:
            return self._receivers[creature]
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    async def deliver(self, creature: str, envelope: Envelope) -> None:
        await self._senders[creature].send(envelope)

    async def aclose(self) -> None:
        for room in self._rooms.values():
            room[0] = 0  # closed below: no direct append from now on (see Direct)
        for send in self._senders.values():
            send.close()
        for rec in self._receivers.values():
            rec.close()


__all__ = [
    "LocalReceiver",
    "LocalTransport",
]
