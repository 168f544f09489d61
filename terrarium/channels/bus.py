"""The event bus: sync, non-blocking publish; bounded per subscriber; losses are told.

A slow subscriber never slows the runtime: when its buffer is full the event is dropped
for that subscriber only and counted; the count reaches it as one ``Missed(count)`` event
placed exactly where the gap is (before the next event that fits, or when it has drained
everything). Events are delivered in publish order to each subscriber.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from terrarium.events import Event, Missed

DEFAULT_EVENT_CAPACITY = 1024


class EventSubscription:
    """One subscriber's bounded view of the bus; async-iterable; ``close`` to leave."""

    def __init__(
        self,
        bus: EventBus,
        capacity: int,
        accept: Callable[[Event], bool] | None,
    ) -> None:
        send, recv = anyio.create_memory_object_stream[Event](capacity)
        self._bus = bus
        self._send: MemoryObjectSendStream[Event] = send
        self._recv: MemoryObjectReceiveStream[Event] = recv
        self.accept = accept
        self.missed = 0  # dropped since the last Missed was handed over
        self.total_missed = 0
        self.tapped = False  # ``EventBus.tap``: told through ``accept``, nothing queued

    def _offer(self, event: Event) -> None:
        if self.accept is not None and not self.accept(event):
            return
        try:
            if self.missed:
                self._send.send_nowait(Missed(count=self.missed))
                self.missed = 0
            self._send.send_nowait(event)
        except anyio.WouldBlock:
            self.missed += 1
            self.total_missed += 1
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    def receive_nowait(self) -> Event:
        """Next event, or ``Missed`` once drained after losses; raises ``anyio.WouldBlock``."""
        try:
            return self._recv.receive_nowait()
        except anyio.WouldBlock:
            if self.missed:
                n, self.missed = self.missed, 0
                return Missed(count=n)
            raise

    async def receive(self) -> Event:
        try:
            return self.receive_nowait()
        except anyio.WouldBlock:
            return await self._recv.receive()

    def drain(self) -> list[Event]:
        """Everything available right now, without waiting (tests, TUI refresh)."""
        out: list[Event] = []
        while True:
            try:
                out.append(self.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream):
                return out

    def close(self) -> None:
        self._bus._remove(self)
        self._send.close()
        self._recv.close()

    def __aiter__(self) -> EventSubscription:
        return self

    async def __anext__(self) -> Event:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    def __enter__(self) -> EventSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    """Fan-out of typed events to bounded subscribers; ``publish`` never waits."""

    def __init__(self) -> None:
        self._subs: tuple[EventSubscription, ...] = ()
        # what ``publish`` calls, one per subscriber: its ``_offer``, or a tap's function
        self._calls: tuple[Callable[[Event], object], ...] = ()

    @property
    def active(self) -> bool:
        """True when someone listens (lets hot paths skip building events)."""
        return bool(self._subs)

    def subscribe(
        self,
        capacity: int = DEFAULT_EVENT_CAPACITY,
        accept: Callable[[Event], bool] | None = None,
    ) -> EventSubscription:
        if capacity < 2:
            raise ValueError("an event subscription needs room for at least 2 events")
        sub = EventSubscription(self, capacity, accept)
        self._subs = (*self._subs, sub)
        self._calls = (*self._calls, sub._offer)
        return sub

    def tap(self, fn: Callable[[Event], object]) -> EventSubscription:
        """A subscriber that is only told: ``fn(event)`` at each publish, in order, and
        nothing queued for it (``terrarium serve`` numbers a session's events this way).
        ``close`` the subscription returned to leave."""
        sub = EventSubscription(self, 2, fn)
        sub.tapped = True
        self._subs = (*self._subs, sub)
        self._calls = (*self._calls, fn)
        return sub

    def publish(self, event: Event) -> None:
        """Offer ``event`` to every subscriber; a full subscriber just counts a miss."""
        for call in self._calls:
            call(event)

    def _remove(self, sub: EventSubscription) -> None:
        self._subs = tuple(s for s in self._subs if s is not sub)
        self._calls = tuple(_call_of(s) for s in self._subs)

    def close(self) -> None:
        for sub in self._subs:
            sub._send.close()
        self._subs = ()
        self._calls = ()


def _call_of(sub: EventSubscription) -> Callable[[Event], object]:
    """What ``publish`` calls for ``sub``."""
    if sub.tapped and sub.accept is not None:
        return sub.accept
    return sub._offer


__all__ = [
    "DEFAULT_EVENT_CAPACITY",
    "EventBus",
    "EventSubscription",
]
