"""``ChannelHub.send_many``: several payloads on one channel as one batch, with one schema
pass and one log commit (a mixin of :class:`terrarium.channels.hub.ChannelHub`, kept apart
because the batch path shares nothing with ``send``'s per-message hot path but the route)."""

from __future__ import annotations

import time
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.payload import PayloadRefused
from terrarium.channels.spec import SendResult
from terrarium.channels.transport import BatchRefusal, Delivered
from terrarium.errors import ChannelRefusal

if TYPE_CHECKING:
    from terrarium.channels.bus import EventBus
    from terrarium.channels.hub import _Route
    from terrarium.channels.record import ChannelRecord

_tuple_new = tuple.__new__


class BatchSending:
    """The hub's ``send_many``; the attributes and methods below are the hub's own."""

    _record: ChannelRecord | None
    send_timeout: float | None
    bus: EventBus

    if TYPE_CHECKING:
        async def _route(self, sender: str, channel: str, payload: Any) -> _Route: ...
        async def _refuse(self, sender: str, channel: str, reason: str,
                          payload: Any) -> typing.NoReturn: ...
        def _announce(self, env: Envelope, delivered: tuple[str, ...]) -> None: ...

    async def send_many(
        self,
        sender: str,
        channel: str,
        payloads: Iterable[Mapping[str, Any] | BaseModel],
        *,
        reply_to: str | None = None,
        correlation_id: str | None = None,
        wait_limit: float | None = -1.0,
        ids: Sequence[str | None] | None = None,
    ) -> list[SendResult]:
        """Send several payloads in order as one batch: one schema pass, one log commit.

        All or nothing for refusals: the first invalid or oversized payload (over the
        channel's ``max_bytes``, as ``send`` checks) refuses the whole batch (its index is
        named) before anything is logged or delivered. ``ids`` are the payloads' exactly-once
        ids (message id and log dedupe key at once, like ``send``'s ``key``; None: a fresh
        id): with a log, a payload whose id is already logged is not sent again, and its
        first result comes back in its place.
        """
        route = await self._route(sender, channel, None)
        items = [p.model_dump() if isinstance(p, BaseModel) else p for p in payloads]
        keys = list(ids) if ids is not None else [None] * len(items)
        if len(keys) != len(items):
            raise ValueError(f"send_many got {len(keys)} ids for {len(items)} payloads")
        try:
            bodies = route.rules.check_batch(channel, items)
        except PayloadRefused as r:
            await self._refuse(sender, channel, r.reason, r.payload)
        record = self._record
        done = {} if record is None else {
            i: seen for i, k in enumerate(keys) if (seen := record.sent(k)) is not None}
        now = time.time()
        fresh = [i for i in range(len(bodies)) if i not in done]
        envs = [Envelope.trusted(keys[i] or new_message_id(), channel, sender,
                                 route.schema_name, bodies[i], now, reply_to, correlation_id)
                for i in fresh]
        lane = route.lane
        plan: list[Delivered] | None = None
        if record is not None:  # the whole batch addressed, then logged at once
            plan = [lane.address(e, look=False) for e in envs]
            await record.messages(envs, plan, [keys[i] for i in fresh])
        if wait_limit is not None and wait_limit < 0:
            wait_limit = self.send_timeout
        try:  # one call: a broker pipelines the batch (see Lane.publish_batch)
            got = await lane.publish_batch(envs, plan, wait_limit)
        except ChannelRefusal as exc:
            at = exc.index if isinstance(exc, BatchRefusal) else 0
            if route.taps:  # the observers' copies of those delivered, as send gives
                for e in envs[:at]:
                    lane.tap(e)
            await self._refuse(sender, channel, exc.message, envs[at].payload)
        if route.taps:
            for e in envs:
                lane.tap(e)
        out = [_tuple_new(SendResult, (e, d)) for e, d in zip(envs, got, strict=True)]
        if self.bus._subs:
            for r in out:
                self._announce(r.envelope, r.delivered_to)
        if done:  # the already-sent ones back in their places
            sent = iter(out)
            out = [done[i] if i in done else next(sent) for i in range(len(bodies))]
        return out


__all__ = ["BatchSending"]
