"""Triggers: what wakes a creature when nobody writes to it.

Four kinds, from a creature's ``triggers:`` config: ``timer`` (every N seconds), ``cron``
(a cron expression, computed by ``croniter``), ``idle`` (N seconds without a message or a
turn), ``startup`` (once, when the run starts). Each firing is recorded as a
``TriggerFired`` event and handed to ``deliver`` (the runtime's: straight into the
creature's inbox as an envelope from the sender ``trigger``, or on a named channel).

All waiting goes through a :class:`TriggerTime`, so a test moves time by hand
(:class:`ManualTime`) and never sleeps; the runtime uses :class:`RealTime`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from terrarium.channels.bus import EventBus, EventSubscription
from terrarium.config.models import TriggerConfig
from terrarium.events import Event, MessageDelivered, TriggerFired, TurnEnded

__all__ = ["Deliver", "ManualTime", "RealTime", "TriggerTime", "Triggers", "next_cron"]

Deliver = Callable[[str, TriggerConfig, str], Awaitable[None]]
"""Deliver ``text`` from ``trigger`` to ``creature``."""


class TriggerTime(Protocol):
    """Now, in seconds since the epoch, and a way to wait until a moment."""

    def now(self) -> float: ...

    async def sleep_until(self, moment: float) -> None: ...


class RealTime:
    """The wall clock."""

    def now(self) -> float:
        return time.time()

    async def sleep_until(self, moment: float) -> None:
        await anyio.sleep(max(0.0, moment - time.time()))


class ManualTime:
    """Time that moves only when the test says so: ``await t.advance(seconds)``."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._moved = anyio.Event()

    def now(self) -> float:
        return self._now

    async def sleep_until(self, moment: float) -> None:
        while self._now < moment:
            await self._moved.wait()

    async def advance(self, seconds: float) -> None:
        """Move time forward and let every waiter that is now due run."""
        self._now += seconds
        moved, self._moved = self._moved, anyio.Event()
        moved.set()
        for _ in range(5):  # let the woken tasks reach their delivery
            await anyio.lowlevel.checkpoint()


def next_cron(expr: str, after: float) -> float | None:
    """The next moment (epoch seconds, UTC) the cron expression names after ``after``, or
    None when croniter finds none (config checks refuse an expression that never fires; this
    keeps a rare one croniter gives up on from ending the run). croniter is imported here:
    only teams with a cron trigger need it."""
    from croniter import CroniterBadDateError, croniter

    start = datetime.fromtimestamp(after, tz=UTC)
    try:
        return float(croniter(expr, start).get_next(float))
    except CroniterBadDateError:
        return None


class Triggers:
    """Runs every creature's triggers in the run's task group."""

    def __init__(self, triggers: Mapping[str, Sequence[TriggerConfig]], deliver: Deliver, *,
                 bus: EventBus, clock: TriggerTime | None = None) -> None:
        self.triggers = {c: list(ts) for c, ts in triggers.items() if ts}
        self.deliver = deliver
        self.bus = bus
        self.time: TriggerTime = clock or RealTime()
        self.last_activity: dict[str, float] = {}

    def start(self, tg: anyio.abc.TaskGroup) -> None:
        if not self.triggers:
            return
        now = self.time.now()
        for creature, triggers in self.triggers.items():
            self.last_activity[creature] = now
            for t in triggers:
                tg.start_soon(self._run, creature, t)
        if any(t.type == "idle" for ts in self.triggers.values() for t in ts):
            tg.start_soon(self._watch, self.bus.subscribe(capacity=1024))

    async def _watch(self, sub: EventSubscription) -> None:
        """Activity that resets idle timers: a message delivered to, or a turn ended by, a
        creature."""
        with sub:  # left (its stream closed) when the run cancels this task
            async for ev in sub:
                who = self._active(ev)
                if who in self.last_activity:
                    self.last_activity[who] = self.time.now()

    @staticmethod
    def _active(ev: Event) -> str | None:
        if isinstance(ev, MessageDelivered):
            return ev.receiver
        if isinstance(ev, TurnEnded):
            return ev.creature
        return None

    async def _fire(self, creature: str, t: TriggerConfig) -> None:
        name = t.name or t.type
        text = t.text or f"The {name} trigger fired."
        self.bus.publish(TriggerFired(creature=creature, trigger=name, trigger_type=t.type,
                                      text=text, channel=t.channel))
        await self.deliver(creature, t, text)

    async def _run(self, creature: str, t: TriggerConfig) -> None:
        clock = self.time
        if t.type == "startup":
            await self._fire(creature, t)
        elif t.type == "timer":
            assert t.every is not None
            due = clock.now() + t.every
            while True:
                await clock.sleep_until(due)
                await self._fire(creature, t)
                due += t.every
                due = max(due, clock.now())  # a slow delivery never makes a burst
        elif t.type == "cron":
            assert t.cron is not None
            due = next_cron(t.cron, clock.now())
            while due is not None:
                await clock.sleep_until(due)
                await self._fire(creature, t)
                due = next_cron(t.cron, max(due, clock.now()))
        else:  # idle
            assert t.after is not None
            while True:
                due = self.last_activity[creature] + t.after
                if clock.now() >= due:
                    await self._fire(creature, t)
                    self.last_activity[creature] = clock.now()
                    continue
                await clock.sleep_until(due)
