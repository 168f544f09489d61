"""The transport interface: how envelopes reach a creature's inbox.

The hub decides *who* gets a message (permissions, schema, queue/broadcast routing, the
log); a transport only moves envelopes into per-creature inboxes and tells whether an
inbox has room. A networked broker can implement these two classes and replace the
in-process one without creatures noticing: they only ever see a ``Receiver``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import anyio

from terrarium.channels.envelope import Envelope

if TYPE_CHECKING:
    from terrarium.channels.spec import ChannelSpec, CreatureWiring

NowaitPut = Callable[[Envelope], None]
"""Puts an envelope in one inbox now, or raises ``anyio.WouldBlock`` (full; nothing done)."""

WaitPut = Callable[[Envelope], Awaitable[None]]
"""Puts an envelope in one inbox, waiting while it is full (``Transport.deliver`` for it)."""


class Receiver(ABC):
    """One creature's merged inbox over every channel it listens to.

    Order: envelopes come out in the order they were put in (one FIFO per creature across
    all its channels); replayed envelopes (resume) come first.
    """

    def __init__(self, creature: str) -> None:
        self.creature = creature
        self._replay: deque[Envelope] = deque()

    def replay(self, envelopes: Iterable[Envelope]) -> None:
        """Queue envelopes recovered from the log ahead of live traffic (unbounded, once)."""
        self._replay.extend(envelopes)

    @abstractmethod
    def _receive_live_nowait(self) -> Envelope: ...

    @abstractmethod
    async def _receive_live(self) -> Envelope: ...

    @abstractmethod
    def pending(self) -> int:
        """Envelopes waiting in this inbox right now."""

    def receive_nowait(self) -> Envelope:
        """Next envelope without waiting; raises ``anyio.WouldBlock`` or ``anyio.EndOfStream``."""
        if self._replay:
            return self._replay.popleft()
        return self._receive_live_nowait()

    async def receive(self) -> Envelope:
        """Next envelope, waiting for one. Raises ``anyio.EndOfStream`` once the hub closed.

        Takes what is already there without yielding to the event loop (the receive
        only suspends when the inbox is empty): this keeps bursts cheap.
        """
        if self._replay:
            return self._replay.popleft()
        try:
            return self._receive_live_nowait()
        except anyio.WouldBlock:
            return await self._receive_live()

    async def receive_batch(self, max_items: int = 256) -> list[Envelope]:
        """Wait for at least one envelope, then take up to ``max_items`` already there."""
        first = await self.receive()
        out = [first]
        nowait = self.receive_nowait
        try:
            while len(out) < max_items:
                out.append(nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            pass
        return out

    def __aiter__(self) -> Receiver:
        return self

    async def __anext__(self) -> Envelope:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


class Transport(ABC):
    """Moves envelopes into inboxes; every inbox is opened before anything is sent.

    A *brokered* transport (``brokered = True``, e.g. NATS JetStream) routes by itself: the
    hub still validates, refuses and logs, then calls :meth:`publish` once per message and
    the broker picks the queue listener or fans a broadcast out. Its listeners take a
    message for good only when the runtime calls :meth:`ack` (the turn's effects are
    recorded); in-process transports hand over at delivery, so ``ack`` does nothing.
    """

    brokered: bool = False

    def bind(self, specs: Mapping[str, ChannelSpec],
             wiring: Mapping[str, CreatureWiring]) -> None:
        """The team's channels and who listens where, before any inbox opens (default: unused)."""
        return None

    async def publish(self, envelope: Envelope, targets: tuple[str, ...], broadcast: bool,
                      wait_limit: float | None) -> None:
        """Brokered transports: store ``envelope`` for ``targets`` (raise to refuse)."""
        raise NotImplementedError(f"{type(self).__name__} delivers through try_deliver")

    async def ack(self, creature: str, message_ids: tuple[str, ...]) -> None:
        """``creature``'s turn over these messages is recorded: they are taken for good."""
        return None

    def outstanding(self) -> int:
        """Messages elsewhere (another process) not yet taken for good; 0 in-process."""
        return 0

    @abstractmethod
    def open_inbox(self, creature: str, capacity: int) -> Receiver:
        """Create ``creature``'s inbox holding at most ``capacity`` live envelopes."""

    @abstractmethod
    def inbox(self, creature: str) -> Receiver: ...

    @abstractmethod
    def try_deliver(self, creature: str, envelope: Envelope) -> bool:
        """Put ``envelope`` in the inbox now; False (nothing done) when it is full."""

    def nowait_put(self, creature: str) -> NowaitPut:
        """The non-blocking fast path into ``creature``'s inbox, looked up once per route.

        The hub calls it first for every receiver and awaits :meth:`deliver` only when it
        raises ``anyio.WouldBlock`` (the inbox is full). The default wraps
        :meth:`try_deliver`; an in-process transport returns its stream's ``send_nowait``.
        """
        try_deliver = self.try_deliver

        def put(envelope: Envelope) -> None:
            if not try_deliver(creature, envelope):
                raise anyio.WouldBlock

        return put

    def wait_put(self, creature: str) -> WaitPut:
        """The waiting put into ``creature``'s inbox, looked up once per route: what the hub
        awaits when :meth:`nowait_put` found it full. The default wraps :meth:`deliver`; an
        in-process transport returns its stream's ``send``."""
        deliver = self.deliver

        async def put(envelope: Envelope) -> None:
            await deliver(creature, envelope)

        return put

    @abstractmethod
    async def deliver(self, creature: str, envelope: Envelope) -> None:
        """Put ``envelope`` in the inbox, waiting while it is full (backpressure)."""

    @abstractmethod
    def has_room(self, creature: str) -> bool:
        """Whether a delivery to ``creature`` would succeed without waiting."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close every inbox; receivers see end of stream after draining."""


__all__ = [
    "NowaitPut",
    "Receiver",
    "Transport",
    "WaitPut",
]
