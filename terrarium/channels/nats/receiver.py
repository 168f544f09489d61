"""A hosted creature's inbox on NATS JetStream: one puller per channel it listens on, and a
heartbeat for every message it holds (taken, not yet acked).

The transport (:class:`~terrarium.channels.nats.transport.NatsTransport`) opens it and acks
its messages once the runtime says the turn's effects are recorded.

A heartbeat only works while this process runs. One that stalls (a starved CPU, a paused
VM, SIGSTOP) past the ack wait loses its messages to another listener, and a turn it then
finished would be a second one. So each held message keeps the time of its last heartbeat:
past ``TAKEN_OVER`` of the ack wait without one, the message counts as taken over for
good (:meth:`NatsReceiver.taken_over`) and the runtime drops that turn instead of
recording it. A message handed to us again is checked against its stream first: on a
queue channel, one already gone was acked by the listener that took it over. A message
read after such a stall may have been delivered before it, to a fetch under way then (it
waited in the client's queue while the process stood still, and came out of the next
fetch as a first delivery): it is left unacked, for the broker to hand out again, instead
of taken as fresh (:meth:`NatsReceiver.stalled`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from pydantic import ValidationError

from terrarium.channels.envelope import Envelope
from terrarium.channels.nats.naming import QUEUE_CONSUMER, broadcast_consumer, channel_stream
from terrarium.channels.transport import ENDED, Receiver

if TYPE_CHECKING:
    from terrarium.channels.nats.transport import NatsTransport

__all__ = ["NatsReceiver"]

logger = logging.getLogger("terrarium.channels.nats")

_FETCH_WAIT = 2.0
TAKEN_OVER = 0.75
"""The part of the ack wait a held message may go without a heartbeat before it counts as
taken over (below 1: the broker's clock started when it sent the message, ours a little
later, and a heartbeat takes a moment to arrive)."""


class NatsReceiver(Receiver):
    """One hosted creature's inbox: a puller per channel hands messages over one at a time.

    The hand-over has no buffer: a puller fetches the next message only once the creature
    took the previous one, so an idle replica elsewhere gets the rest of a queue.
    """

    def __init__(self, transport: NatsTransport, creature: str,
                 channels: Sequence[tuple[str, bool]]) -> None:
        super().__init__(creature)
        self._t = transport
        self._channels = tuple(channels)  # (channel, broadcast)
        self._send, self._recv = anyio.create_memory_object_stream[Envelope](0)
        self.held: dict[str, Msg] = {}  # taken, not yet acked: heartbeated
        self._beat: dict[str, float] = {}  # held message id -> its last heartbeat (monotonic)
        self._tick = time.monotonic()  # the heartbeat loop's last round
        self._stall_end = 0.0  # when the last stall it saw ended (monotonic)
        self._offered = 0
        self._started = False

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        self._tick = time.monotonic()  # the heartbeat loop starts now
        tg = self._t.task_group
        for channel, broadcast in self._channels:
            tg.start_soon(self._pull, channel, broadcast)
        tg.start_soon(self._heartbeat)

    def _receive_live_nowait(self) -> Envelope:
        self._start()
        return self._recv.receive_nowait()

    async def _receive_live(self) -> Envelope:
        self._start()
        try:
            return await self._recv.receive()
        except anyio.ClosedResourceError:  # closed while waiting: the end
            raise anyio.EndOfStream from None

    def pending(self) -> int:
        return self._offered + len(self._replay)

    def close(self) -> None:
        """The end for whoever reads (nothing is buffered: the hand-over has no room);
        both ends closed now, not left to the collector."""
        self._send.close()
        self._recv.close()
        self._recv = ENDED  # type: ignore[assignment]

    async def _pull(self, channel: str, broadcast: bool) -> None:
        t = self._t
        stream = channel_stream(t.run_id, channel)
        durable = broadcast_consumer(self.creature) if broadcast else QUEUE_CONSUMER
        sub = await t.js.pull_subscribe_bind(durable=durable, stream=stream)
        asked = time.monotonic()
        while True:
            # a fetch may return what the broker sent for the one before it (it waited in
            # the client's queue while that one timed out): judged from the earlier's start
            before, asked = asked, time.monotonic()
            try:
                msgs = await sub.fetch(t.prefetch, timeout=_FETCH_WAIT)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            except (nats.errors.ConnectionClosedError, nats.errors.BadSubscriptionError):
                return
            if self.stalled(since=before):
                logger.info("leaving %d message(s) of %s to be handed out again: this "
                            "process stood still while they were fetched", len(msgs), channel)
                continue  # unacked: the broker hands them out again after its ack wait
            for msg in msgs:
                try:
                    env = Envelope.from_json(msg.data)
                except ValidationError as exc:
                    logger.error("dropping a malformed message on %s: %s", channel, exc)
                    await msg.term()
                    continue
                if broadcast and env.sender == self.creature:
                    await msg.ack()  # a broadcast never goes back to its sender
                    continue
                if env.id in self.held:  # redelivered while still ours: keep the newer handle
                    self.held[env.id] = msg
                    continue
                if not broadcast and await self._acked_elsewhere(msg, stream):
                    continue
                self.held[env.id] = msg
                self._beat[env.id] = time.monotonic()
                self._offered += 1
                try:
                    await self._send.send(env)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                finally:
                    self._offered -= 1

    async def _acked_elsewhere(self, msg: Msg, stream: str) -> bool:
        """A queue message handed out before (to a listener that fell silent, maybe us)
        that its work-queue stream no longer stores: whoever took it over acked it."""
        meta = msg.metadata
        if meta.num_delivered <= 1:
            return False
        try:
            await self._t.js.get_msg(stream, seq=meta.sequence.stream)
        except nats.js.errors.NotFoundError:
            logger.info("skipping message %s of %s: acked by another listener",
                        meta.sequence.stream, stream)
            return True
        except Exception:  # the broker did not answer now: taken as it came
            return False
        return False

    def taken_over(self, message_id: str) -> bool:
        """Whether this held message went longer without a heartbeat than the broker
        waits, give or take (``TAKEN_OVER``): it may be another listener's now. Once true,
        true until it is let go (a heartbeat after the silence cannot take it back)."""
        beat = self._beat.get(message_id)
        return beat is not None and time.monotonic() - beat > self._t.ack_wait * TAKEN_OVER

    def stalled(self, *, since: float) -> bool:
        """Whether this process stood still longer than a held message may go without a
        heartbeat (``TAKEN_OVER`` of the ack wait) at some time after ``since``
        (monotonic): now, with the heartbeat loop's round overdue, or in a stall it saw
        end after ``since``. What the broker sent meanwhile may be another listener's."""
        limit = self._t.ack_wait * TAKEN_OVER
        return time.monotonic() - self._tick > limit or self._stall_end > since

    def forget(self, message_id: str) -> None:
        """Stop holding (and heartbeating) a message: acked, or let go."""
        self.held.pop(message_id, None)
        self._beat.pop(message_id, None)

    async def _heartbeat(self) -> None:
        """Tell the broker every held message is still being worked on (not one that was
        already silent too long: refreshing it would not make it ours again)."""
        while True:
            await anyio.sleep(self._t.ack_wait / 3)
            now = time.monotonic()
            if now - self._tick > self._t.ack_wait * TAKEN_OVER:
                self._stall_end = now  # stood still (SIGSTOP, a starved CPU): see stalled
            self._tick = now
            for mid, msg in list(self.held.items()):
                if self.taken_over(mid):
                    continue
                self._beat[mid] = now
                with contextlib.suppress(Exception):
                    await msg.in_progress()

