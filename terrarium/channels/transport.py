"""The transport interface: how envelopes reach a creature's inbox.

The hub decides *whether* a message goes (permissions, schema, size) and records it; a
transport decides *who* gets it and moves it there: it makes one ``Lane`` per (sender,
channel) up front, and the hub hands each checked envelope to its lane. The in-process
transport (``channels/local.py``) picks the queue listener round-robin and fans a broadcast
out into memory streams; a broker (``channels/nats``) publishes once and lets the broker
route. Creatures never notice which: they only ever see a ``Receiver``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING

import anyio

from terrarium.channels.envelope import Envelope
from terrarium.errors import ChannelRefusal

if TYPE_CHECKING:
    from terrarium.channels.spec import ChannelSpec, CreatureWiring

Delivered = tuple[str, ...]
"""Who got a message, as the send result names them (a queue on a broker: ``"a|b"``)."""

Direct = tuple[deque[Envelope], list[int], Sized]
"""One inbox's buffer, its room and its waiting receivers: appending to the buffer is the
whole delivery while nobody waits (``not waiting``) and ``len(buffer) < room[0]``. The
transport sets ``room[0]`` to 0 when it closes the inbox, so a closed inbox always takes
the lane's ``put`` (which raises as the stream does)."""


class BatchRefusal(ChannelRefusal):
    """Message ``index`` of a batch was refused (see :meth:`Lane.publish_batch`)."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


class _Ended:
    """Stands in for an inbox's memory stream once the hub closed it: every read is the
    end (``EndOfStream``, as the open stream said once its senders were gone)."""

    __slots__ = ()

    def receive_nowait(self) -> Envelope:
        raise anyio.EndOfStream

    async def receive(self) -> Envelope:
        raise anyio.EndOfStream

    def statistics(self) -> _Ended:
        return self  # as a stream's statistics: nothing buffered

    current_buffer_used = 0


ENDED = _Ended()


class Receiver(ABC):
    """One creature's merged inbox over every channel it listens to.

    Order: envelopes come out in the order they were put in (one FIFO per creature across
    all its channels); replayed envelopes (resume) come first.
    """

    def __init__(self, creature: str) -> None:
        self.creature = creature
        self._replay: deque[Envelope] = deque()
        self.replayed: set[str] = set()  # ids queued by ``replay`` not yet taken by a turn

    def replay(self, envelopes: Iterable[Envelope]) -> None:
        """Queue envelopes recovered from the log ahead of live traffic (unbounded, once)."""
        envs = list(envelopes)
        self._replay.extend(envs)
        self.replayed.update(e.id for e in envs)

    def put_back(self, env: Envelope) -> None:
        """An envelope taken but not used now goes first in line again (not as replayed)."""
        self._replay.appendleft(env)

    def take_waiting(self, channel: str, limit: int) -> list[Envelope]:
        """Up to ``limit`` envelopes waiting now at the head of the inbox on ``channel``,
        in order; the first one of another channel, or a replayed one, stays in line."""
        out: list[Envelope] = []
        while len(out) < limit:
            try:
                env = self.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            if env.channel != channel or env.id in self.replayed:
                self.put_back(env)
                break
            out.append(env)
        return out

    def take_replayed(self, ids: Iterable[str]) -> list[Envelope]:
        """The replayed envelopes with these ids, taken out of line in their order (a
        merged turn done again after a crash takes the messages its first attempt took)."""
        wanted = set(ids)
        out = [e for e in self._replay if e.id in wanted]
        if out:
            self._replay = deque(e for e in self._replay if e.id not in wanted)
            self.replayed.difference_update(e.id for e in out)
        return out

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


class Lane(ABC):
    """One sender's way onto one channel, made once by :meth:`Transport.lane`.

    ``targets`` are the channel's listeners (a broadcast's without the sender); ``taps`` the
    observers that get a copy (in-process only; see ``ChannelHub.observed``). A send takes
    one of two paths, chosen by the hub (not by the transport's kind):

    - unrecorded: :meth:`publish_nowait`, then :meth:`publish` only when it could not
      finish without waiting;
    - recorded (a durable log): :meth:`address` names the receivers, the hub commits the
      message with them, then :meth:`publish_to` delivers to exactly those.

    A wait that runs out raises ``ChannelRefusal`` with the sentence the hub records.
    """

    __slots__ = ("direct", "put", "taps", "targets")

    def __init__(self, targets: Delivered, taps: tuple[str, ...] = ()) -> None:
        self.targets = targets
        self.taps = taps
        # a lane that delivers to all of ``targets`` with one plain call (or raises
        # ``anyio.WouldBlock`` having delivered nothing) names it here, and the hub's fast
        # path calls it instead of :meth:`publish_nowait` (one Python frame less a message)
        self.put: Callable[[Envelope], None] | None = None
        # a lane of one in-process inbox may name its buffer too (see ``Direct``): the hub
        # appends to it inline when that is all ``put`` would do (no call at all)
        self.direct: Direct | None = None

    def publish_nowait(self, envelope: Envelope) -> Delivered | int:
        """Deliver without waiting: who got it, or (when some inbox was full) how many
        receivers in order already have it, to hand to :meth:`publish` as ``start``."""
        return 0

    def publish_all_nowait(self, envelope: Envelope) -> Delivered:
        """Deliver to every receiver without waiting, or raise ``anyio.WouldBlock`` having
        delivered to nobody (``ChannelHub.send_nowait``). Default: never possible."""
        raise anyio.WouldBlock

    @abstractmethod
    async def publish(self, envelope: Envelope, wait_limit: float | None,
                      start: int = 0) -> Delivered:
        """Deliver, waiting at most ``wait_limit`` seconds (None: forever) for room; after
        :meth:`publish_nowait` returned ``start``."""

    @abstractmethod
    def address(self, envelope: Envelope, look: bool = True) -> Delivered:
        """Who this message is for, decided before it is recorded. ``look=False``: plan a
        batch in turn, without looking for room."""

    @abstractmethod
    async def publish_to(self, envelope: Envelope, receivers: Delivered,
                         wait_limit: float | None) -> Delivered:
        """Deliver to the ``receivers`` :meth:`address` named, waiting as :meth:`publish`."""

    async def publish_batch(self, envelopes: Sequence[Envelope],
                            receivers: Sequence[Delivered] | None,
                            wait_limit: float | None) -> list[Delivered]:
        """A batch in order (``send_many``): unrecorded (``receivers`` None) or to the
        receivers :meth:`address` named for each. This default delivers one at a time; a
        broker pipelines (``channels/nats``). A refusal (``BatchRefusal``, naming the
        message) leaves the rest undelivered."""
        out: list[Delivered] = []
        for k, env in enumerate(envelopes):
            try:
                if receivers is not None:
                    out.append(await self.publish_to(env, receivers[k], wait_limit))
                    continue
                got = self.publish_nowait(env)
                out.append(got if type(got) is tuple
                           else await self.publish(env, wait_limit, got))
            except BatchRefusal:
                raise
            except ChannelRefusal as exc:
                raise BatchRefusal(exc.message, k) from None
        return out

    def tap(self, envelope: Envelope) -> None:
        """Copies for the observers: never waits (see ``ChannelHub.observed``)."""
        return None

    def can_take(self, receivers: Delivered) -> bool:
        """Whether every one of ``receivers`` (from :meth:`address`) can take a message
        now, without waiting; then :meth:`put_to` delivers it, provided nothing else ran
        in between. Default: not known (False)."""
        return False

    def put_to(self, envelope: Envelope, receivers: Delivered) -> None:
        """Deliver to ``receivers`` at once, right after :meth:`can_take` said they can."""
        raise anyio.WouldBlock


class Transport(ABC):
    """Routes envelopes into inboxes; every inbox is opened before anything is sent.

    ``keeps_messages``: the transport itself holds a message until a listener takes it for
    good (a broker): the log's row is then a record, not the promise of delivery, so the
    hub logs it without its send key (a re-run turn re-sends and the transport drops the
    repeat by id) and tolerates a repeated id. Its listeners take a message for good only
    when the runtime calls :meth:`ack` (the turn's effects are recorded); in-process
    transports hand over at delivery, so ``ack`` does nothing. ``brokered``: the team's
    creatures may live in other processes (the runtime's concern, not the hub's).
    """

    brokered: bool = False
    keeps_messages: bool = False

    def bind(self, specs: Mapping[str, ChannelSpec], wiring: Mapping[str, CreatureWiring],
             observers: Mapping[str, tuple[str, ...]] | None = None) -> None:
        """The team's channels, who listens where and who observes what, before any inbox
        opens (default: unused). Raise ``RuntimeFailure`` for what it cannot carry."""
        return None

    @abstractmethod
    def lane(self, sender: str, spec: ChannelSpec, targets: Delivered,
             observers: tuple[str, ...] = ()) -> Lane:
        """``sender``'s lane onto ``spec``'s channel, to ``targets`` (every inbox is open)."""

    async def ack(self, creature: str, message_ids: tuple[str, ...]) -> None:
        """``creature``'s turn over these messages is recorded: they are taken for good."""
        return None

    def taken_over(self, creature: str, message_id: str) -> bool:
        """Whether ``creature``'s copy of this message may now be another listener's: a
        broker hands a message on once its holder falls silent past the ack wait (a
        stalled or frozen process). In-process transports never hand anything on."""
        return False

    async def let_go(self, creature: str, message_id: str) -> None:
        """Forget a message taken over (:meth:`taken_over`) without acking it: whoever
        holds it now acks it, or the broker hands it on again."""
        return None

    async def kept_ids(self) -> frozenset[str]:
        """Ids of the messages this transport still holds from an earlier process of the
        run and redelivers by itself (a broker's unacked messages); a resumed hub leaves
        them to it, so each comes once. In-process transports keep nothing across a
        restart: the log is the only copy."""
        return frozenset()

    def outstanding(self) -> int:
        """Messages elsewhere (another process) not yet taken for good; 0 in-process."""
        return 0

    @property
    def observer_missed(self) -> dict[str, int]:
        """Copies each observer missed because its inbox was full (in-process only)."""
        return {}

    @abstractmethod
    def open_inbox(self, creature: str, capacity: int) -> Receiver:
        """Create ``creature``'s inbox holding at most ``capacity`` live envelopes."""

    @abstractmethod
    def inbox(self, creature: str) -> Receiver: ...

    @abstractmethod
    async def deliver(self, creature: str, envelope: Envelope) -> None:
        """Put ``envelope`` in one inbox, waiting while it is full: a message from the
        framework (a trigger, a job's end), not from a channel."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close every inbox; receivers see end of stream after draining."""


__all__ = [
    "BatchRefusal",
    "Delivered",
    "Lane",
    "Receiver",
    "Transport",
]
