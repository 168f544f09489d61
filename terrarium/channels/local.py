"""The in-process transport: one bounded anyio memory object stream per creature."""

from __future__ import annotations

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from terrarium.channels.envelope import Envelope
from terrarium.channels.transport import NowaitPut, Receiver, Transport, WaitPut
from terrarium.errors import RuntimeFailure


class LocalReceiver(Receiver):
    """A creature's inbox backed by the receive side of a memory object stream."""

    def __init__(self, creature: str, stream: MemoryObjectReceiveStream[Envelope]) -> None:
        super().__init__(creature)
        self._stream = stream

    def _receive_live_nowait(self) -> Envelope:
        return self._stream.receive_nowait()

    async def receive_batch(self, max_items: int = 256) -> list[Envelope]:
        """As :meth:`Receiver.receive_batch`, taking from the stream's buffer directly."""
        first = await self.receive()
        out = [first]
        # replayed envelopes (resume) first, through the generic path
        nowait = self.receive_nowait if self._replay else self._stream.receive_nowait
        append = out.append
        try:
            for _ in range(max_items - 1):
                append(nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            pass
        return out

    async def _receive_live(self) -> Envelope:
        return await self._stream.receive()

    def pending(self) -> int:
        return self._stream.statistics().current_buffer_used + len(self._replay)


class LocalTransport(Transport):
    """Inboxes in this process; the zero-copy default (envelopes are shared, immutable)."""

    def __init__(self) -> None:
        self._senders: dict[str, MemoryObjectSendStream[Envelope]] = {}
        self._receivers: dict[str, LocalReceiver] = {}

    def open_inbox(self, creature: str, capacity: int) -> Receiver:
        if creature in self._receivers:
            raise RuntimeFailure(f"The inbox of creature {creature!r} is already open.")
        send, recv = anyio.create_memory_object_stream[Envelope](capacity)
        self._senders[creature] = send
        rec = LocalReceiver(creature, recv)
        self._receivers[creature] = rec
        return rec

    def inbox(self, creature: str) -> Receiver:
        try:
            return self._receivers[creature]
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    def try_deliver(self, creature: str, envelope: Envelope) -> bool:
        try:
            self._senders[creature].send_nowait(envelope)
        except anyio.WouldBlock:
            return False
        return True

    def nowait_put(self, creature: str) -> NowaitPut:
        """The stream's own ``send_nowait``: no wrapper between the hub and the buffer."""
        try:
            return self._senders[creature].send_nowait
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    def wait_put(self, creature: str) -> WaitPut:
        """The stream's own ``send`` (waits while the inbox is full)."""
        try:
            return self._senders[creature].send
        except KeyError:
            raise RuntimeFailure(f"Creature {creature!r} has no inbox.") from None

    async def deliver(self, creature: str, envelope: Envelope) -> None:
        await self._senders[creature].send(envelope)

    def has_room(self, creature: str) -> bool:
        stats = self._senders[creature].statistics()
        return stats.tasks_waiting_receive > 0 or stats.current_buffer_used < stats.max_buffer_size

    async def aclose(self) -> None:
        for send in self._senders.values():
            send.close()


__all__ = [
    "LocalReceiver",
    "LocalTransport",
]
