"""A hosted creature's inbox on NATS JetStream: one puller per channel it listens on, and a
heartbeat for every message it holds (taken, not yet acked).

The transport (:class:`~terrarium.channels.nats.transport.NatsTransport`) opens it and acks
its messages once the runtime says the turn's effects are recorded.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio
import nats.errors
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
        self._offered = 0
        self._started = False

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
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
        while True:
            try:
                msgs = await sub.fetch(t.prefetch, timeout=_FETCH_WAIT)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            except (nats.errors.ConnectionClosedError, nats.errors.BadSubscriptionError):
                return
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
                self.held[env.id] = msg
                self._offered += 1
                try:
                    await self._send.send(env)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                finally:
                    self._offered -= 1

    async def _heartbeat(self) -> None:
        """Tell the broker every held message is still being worked on."""
        while True:
            await anyio.sleep(self._t.ack_wait / 3)
            for msg in list(self.held.values()):
                with contextlib.suppress(Exception):
                    await msg.in_progress()

