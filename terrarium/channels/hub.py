"""The channel hub: the one object the runtime sends and receives through.

Built from channel specs and the team's wiring (``ChannelMap``), it opens every inbox up
front (nothing sent at startup can be lost). A send goes one way, down: the hub checks it
(permission, listeners, then the payload against its channel's ``PayloadRules``), records
it in the durable log when there is one (``ChannelRecord``), and hands it to the ``Lane``
the transport made for this sender and channel, which routes it to the listeners
(``channels/local.py`` in one process, ``channels/nats`` on a broker).

- Backpressure: a send waits while a target inbox is full, up to ``wait_limit`` seconds
  (hub default ``send_timeout``; None = wait forever). Running out of it is a refusal that
  names who already got the message.
- With a log, the message row (with its intended receivers) is committed before any
  delivery; concurrent senders share one commit (see ``LogWriter``). In
  ``commit_at_once`` (serve's input) the events of the sending go in that same commit
  when every receiver can take the message at once (``_send_at_once``).
- Every refusal is raised as ``ChannelRefusal``, written to the log, logged and published
  as ``MessageRefused``. Nothing is dropped silently.
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from anyio import WouldBlock
from pydantic import BaseModel, ValidationError

from terrarium.channels.batch import BatchSending
from terrarium.channels.bus import EventBus
from terrarium.channels.consumption import Consumption
from terrarium.channels.envelope import (
    _TAG_BYTES,
    Envelope,
    _next,
    _pack_id,
    _time_ns,
)
from terrarium.channels.local import LocalTransport
from terrarium.channels.log import DurableLog
from terrarium.channels.payload import (  # their import path before channels/payload.py
    Checked,
    PayloadRefused,
    PayloadRules,
    PayloadValidator,
    compile_validator,
    describe_validation_error,
    payload_size,
)
from terrarium.channels.record import MESSAGE_IGNORE_SQL, ChannelRecord
from terrarium.channels.spec import ChannelMap, ChannelSpec, CreatureWiring, SendResult
from terrarium.channels.transport import Delivered, Lane, Receiver, Transport
from terrarium.channels.writer import LogWriter
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.events import MessageDelivered, MessageRefused, MessageSent

logger = logging.getLogger("terrarium.channels")

_fresh = Envelope.fresh
_tuple_new = tuple.__new__


class _Route:
    """Everything one (sender, channel) send needs, computed once: the channel's payload
    rules (the fast path's parts copied flat: it reads them inline), the transport's lane
    to the listeners and its non-blocking publish, looked up once."""

    __slots__ = ("buf", "fast_fits", "fields", "lane", "max_bytes", "publish_nowait", "put",
                 "room", "rules", "schema_name", "taps", "targets", "waiting")

    def __init__(self, rules: PayloadRules, lane: Lane) -> None:
        self.rules = rules
        self.schema_name = rules.schema_name
        self.fields, self.fast_fits = rules.fields, rules.fast_fits
        self.max_bytes = rules.max_bytes
        self.lane = lane
        self.targets = lane.targets
        self.publish_nowait = lane.publish_nowait
        self.put = lane.put
        # one in-process inbox's buffer, room and waiting receivers (see transport.Direct)
        self.buf, self.room, self.waiting = lane.direct or (None, None, None)
        self.taps = bool(lane.taps)


class ChannelHub(BatchSending, Consumption):
    """Typed channels for one team; use as ``async with ChannelHub(...) as hub``."""

    def __init__(
        self,
        channels: Iterable[ChannelSpec],
        creatures: Iterable[CreatureWiring],
        *,
        transport: Transport | None = None,
        log: DurableLog | None = None,
        run_id: str | None = None,
        terrarium_name: str = "terrarium",
        bus: EventBus | None = None,
        validate: bool = True,
        send_timeout: float | None = None,
        offload_log: bool = False,
        observers: Mapping[str, Iterable[str]] | None = None,
        log_writer: LogWriter | None = None,
    ) -> None:
        """``observers``: {creature: channels} it gets a copy of every message on without
        listening there (see :meth:`observed`); only with an in-process transport."""
        self.channels = ChannelMap(channels, creatures, observers)
        self.specs, self.wiring = self.channels.specs, self.channels.wiring
        self.transport = transport or LocalTransport()
        self.transport.bind(self.specs, self.wiring, self.channels.observers)
        self.bus = bus or EventBus()
        self.validate = validate
        self.send_timeout = send_timeout
        self.log = log
        self.run_id = run_id or (log.start_run(terrarium_name) if log is not None else "")
        self._record = None if log is None else ChannelRecord(
            log, self.run_id, offload=offload_log, keeps_messages=self.transport.keeps_messages,
            writer=log_writer)
        # Every inbox exists before anything can be sent.
        self._inboxes: dict[str, Receiver] = {}
        for name in self.wiring:
            capacity = self.channels.inbox_capacity(name)
            if capacity:
                self._inboxes[name] = self.transport.open_inbox(name, capacity)
        self._routes: dict[tuple[str, str], _Route] = {}
        # the routes ``send`` takes without the general path (see there), by sender then
        # channel: two lookups of interned names cost less than one of a (sender, channel)
        # tuple (built, hashed, compared: ~600 instructions a send)
        self._fast: dict[str, dict[str, _Route]] = {}
        rules = {name: PayloadRules(spec, validate) for name, spec in self.specs.items()}
        for w in self.wiring.values():
            for ch in w.can_send:
                targets = self.channels.targets(w.name, ch)
                lane = self.transport.lane(w.name, self.specs[ch], targets,
                                           self.channels.watchers(w.name, ch))
                route = self._routes[(w.name, ch)] = _Route(rules[ch], lane)
                if log is None and targets and rules[ch].fast:
                    self._fast.setdefault(w.name, {})[ch] = route

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> ChannelHub:
        if self._record is not None:
            await self._record.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self._record is not None:
                await self._record.close()
            await self.transport.aclose()
        finally:
            if self._record is not None:
                await self._record.__aexit__(exc_type, exc, tb)

    # -- wiring ------------------------------------------------------------------------

    def subscribe(self, creature: str) -> Receiver:
        """The creature's merged inbox over all channels it listens to (created up front)."""
        try:
            return self._inboxes[creature]
        except KeyError:
            if creature in self.wiring:
                raise RuntimeFailure(
                    f"Creature {creature!r} listens to no channel, so it has no inbox."
                ) from None
            raise RuntimeFailure(f"There is no creature {creature!r} in this team.") from None

    def listeners(self, channel: str) -> tuple[str, ...]:
        return self.channels.listeners[channel]

    def observed(self, creature: str) -> tuple[str, ...]:
        """The channels ``creature`` observes (see ``ChannelMap``)."""
        return self.channels.observers.get(creature, ())

    @property
    def observer_missed(self) -> dict[str, int]:
        """Copies each observer missed because its inbox was full (see :meth:`observed`)."""
        return self.transport.observer_missed

    @property
    def writer(self) -> LogWriter | None:
        return self._record.writer if self._record is not None else None

    # -- sending -----------------------------------------------------------------------

    async def send(
        self,
        sender: str,
        channel: str,
        payload: Mapping[str, Any] | BaseModel,
        reply_to: str | None = None,
        correlation_id: str | None = None,
        wait_limit: float | None = -1.0,
        key: str | None = None,
        message_id: str | None = None,
    ) -> SendResult:
        """Validate, log, deliver; returns who got it. Raises ``ChannelRefusal``.

        Pass the options after ``payload`` by keyword. They are not keyword-only because
        Python 3.11 looks every omitted keyword-only default up in a dict on each call:
        about 740 instructions a send, a tenth of the typed queue's own cost.

        ``wait_limit`` bounds the wait for full inboxes (-1: the hub's ``send_timeout``).
        ``key`` is the send's deterministic id (a turn's send: run, creature, the message
        the turn consumes, the call's place in it). With a log, a second send with a key
        already logged is recognized as done: nothing is delivered again (a resumed run
        redelivers the logged copy if it was not consumed) and the first result comes back.
        ``message_id`` names the message so that a turn run again after a crash re-sends
        under the same id, which a transport that keeps its messages deduplicates.
        """
        try:
            route = self._fast[sender].get(channel)
        except KeyError:  # a sender without a fast route: the general path
            route = None
        if route is not None and type(payload) is dict:
            # the fast path (no log, a listener, a plain-dict payload): every step is inline,
            # and whatever is not the plain case (a refusal, a body that may be too big) is
            # left to the general path before anything is done
            fields = route.fields  # None: unchecked (a fast route checks here or not at all)
            try:
                body = fields(payload) if fields is not None else payload
            except ValidationError:
                body = None
            fits = route.fast_fits
            if body is not None and (fits is None or fits(body, route.max_bytes)):
                ns = _time_ns()  # Envelope.fresh and new_message_id, inlined
                env = _tuple_new(Envelope, (
                    message_id or _pack_id(ns, _TAG_BYTES, _next()).hex(),
                    channel, sender, route.schema_name, body, ns / 1e9, reply_to,
                    correlation_id))
                buf = route.buf
                if buf is not None and not route.waiting and len(buf) < route.room[0]:
                    buf.append(env)  # all the inbox's put would do (see transport.Direct)
                    delivered = route.targets
                elif (put := route.put) is not None:  # one inbox's put (see Lane.put)
                    try:
                        put(env)
                        delivered = route.targets
                    except WouldBlock:  # full: wait (or be refused)
                        delivered = await self._publish(route.lane, env, wait_limit, 0)
                else:
                    delivered = route.publish_nowait(env)
                    if type(delivered) is not tuple:  # an inbox was full: wait (or be refused)
                        delivered = await self._publish(route.lane, env, wait_limit, delivered)
                if route.taps:
                    route.lane.tap(env)
                if _CRASH_ARMED:
                    crashpoint("hub.send.delivered")
                if self.bus._subs:
                    self._announce(env, delivered)
                return _tuple_new(SendResult, (env, delivered))  # SendResult(env, delivered)
        return await self._send(sender, channel, payload, reply_to, correlation_id,
                                wait_limit, key, message_id)

    def send_nowait(
        self,
        sender: str,
        channel: str,
        payload: Mapping[str, Any],
        reply_to: str | None = None,
        correlation_id: str | None = None,
        message_id: str | None = None,
    ) -> SendResult:
        """``send`` when it can finish without waiting (a memory stream's ``send_nowait``):
        the same checks, envelope, delivery and events, no coroutine. Raises
        ``anyio.WouldBlock`` having sent nothing whenever it cannot: an inbox without room,
        a durable log to write first, a transport that must wait (a broker), a payload the
        fast path does not check, or a refusal to record. Then ``await send(...)`` with the
        same arguments does it all (and refuses, if it must)."""
        try:
            route = self._fast[sender].get(channel)
        except KeyError:
            raise WouldBlock from None
        if route is None or type(payload) is not dict:
            raise WouldBlock
        fields = route.fields
        try:
            body = fields(payload) if fields is not None else payload
        except ValidationError:
            raise WouldBlock from None  # send refuses it, with the sentence and the record
        fits = route.fast_fits
        if fits is not None and not fits(body, route.max_bytes):
            raise WouldBlock
        ns = _time_ns()
        env = _tuple_new(Envelope, (
            message_id or _pack_id(ns, _TAG_BYTES, _next()).hex(),
            channel, sender, route.schema_name, body, ns / 1e9, reply_to, correlation_id))
        buf = route.buf
        if buf is not None and not route.waiting and len(buf) < route.room[0]:
            buf.append(env)  # see send
            delivered = route.targets
        elif (put := route.put) is not None:
            put(env)  # WouldBlock when full: nothing delivered
            delivered = route.targets
        else:
            delivered = route.lane.publish_all_nowait(env)
        if route.taps:
            route.lane.tap(env)
        if _CRASH_ARMED:
            crashpoint("hub.send.delivered")
        if self.bus._subs:
            self._announce(env, delivered)
        return _tuple_new(SendResult, (env, delivered))

    async def _send(self, sender: str, channel: str, payload: Mapping[str, Any] | BaseModel,
                    reply_to: str | None, correlation_id: str | None, wait_limit: float | None,
                    key: str | None, message_id: str | None) -> SendResult:
        """``send`` in every case: a log, a refusal, a payload to convert."""
        record = self._record
        if record is not None and (seen := record.sent(key)) is not None:
            return seen
        route = await self._route(sender, channel, payload)
        if type(payload) is not dict and isinstance(payload, BaseModel):
            payload = payload.model_dump()
        if type(payload) is Checked:  # checked for this route already (``check``)
            body = dict(payload)
        else:
            try:
                body = route.rules.check_one(channel, payload)
            except PayloadRefused as r:
                await self._refuse(sender, channel, r.reason, r.payload)
        env = _fresh(channel, sender, route.schema_name, body, reply_to, correlation_id,
                     message_id)
        if record is None:
            delivered = route.publish_nowait(env)
            if type(delivered) is not tuple:
                delivered = await self._publish(route.lane, env, wait_limit, delivered)
        else:
            receivers = route.lane.address(env)
            if record.writer.at_once():  # (``terrarium serve``'s input)
                sent = await self._send_at_once(record, route, env, receivers, key)
                if sent is not None:
                    return sent
            else:
                await record.message(env, receivers, key)
            delivered = await self._publish(route.lane, env, wait_limit, 0, receivers)
        if route.taps:
            route.lane.tap(env)
        if _CRASH_ARMED:
            crashpoint("hub.send.delivered")
        if self.bus._subs:
            self._announce(env, delivered)
        return SendResult(env, delivered)

    async def _send_at_once(self, record: ChannelRecord, route: _Route, env: Envelope,
                            receivers: tuple[str, ...], key: str | None) -> SendResult | None:
        """A recorded send in ``commit_at_once``: the message row and the events of its
        sending (``message_sent``, ``message_delivered``) in ONE commit, in the caller's
        step, when every receiver can take the message now. The events are published
        (numbered) just before that commit and the message delivered just after it, with
        nothing else running in between: the message is still committed before it is
        delivered, its events before the send returns (serve's 202), in the order they
        always had, and the input costs one commit and one trip round the loop, not two.
        Otherwise (an inbox without room, or the batch taken by another's commit) the
        message is committed alone and None returned: the send goes on as any other."""
        writer = record.writer
        batch = record.stage(env, receivers, key)
        await writer.trip(batch)  # (every input of this trip adds its rows first)
        lane = route.lane
        if not writer.pending(batch) or not lane.can_take(receivers):
            await writer.settle(batch)
            if _CRASH_ARMED:
                crashpoint("hub.send.logged")
            return None
        if self.bus._subs:
            self._announce(env, receivers)
        writer.commit_now()
        writer.check(batch)
        if _CRASH_ARMED:
            crashpoint("hub.send.logged")
        lane.put_to(env, receivers)
        if route.taps:
            lane.tap(env)
        if _CRASH_ARMED:
            crashpoint("hub.send.delivered")
        return SendResult(env, receivers)

    def check(self, sender: str, channel: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``payload`` checked as a send of ``sender``'s on ``channel`` would check it
        (schema, then size), nothing recorded: raises ``PayloadRefused`` (with each field's
        complaint). The body returned is sent without a second check; a send the route
        refuses (no listener, not allowed) is still refused and recorded by ``send``."""
        route = self._routes.get((sender, channel))
        if route is None:
            return dict(payload)
        return Checked(route.rules.check_one(channel, payload))

    async def _route(self, sender: str, channel: str, payload: Any) -> _Route:
        """The route of a send that may go: refused when it may not, or has no listener."""
        route = self._routes.get((sender, channel))
        problem = (self.channels.route_problem(sender, channel) if route is None
                   else None if route.targets else self.channels.no_listener(sender, channel))
        if problem is not None:
            await self._refuse(sender, channel, problem, payload)
        return route  # type: ignore[return-value]  # refused above when None

    async def _publish(self, lane: Lane, env: Envelope, wait_limit: float | None,
                       start: int = 0, receivers: Delivered | None = None) -> Delivered:
        """The rest of an unrecorded send after ``publish_nowait`` returned ``start``, or a
        recorded send's delivery to the ``receivers`` its log row names (see ``Lane``)."""
        if wait_limit is not None and wait_limit < 0:
            wait_limit = self.send_timeout
        try:
            if receivers is None:
                return await lane.publish(env, wait_limit, start)
            return await lane.publish_to(env, receivers, wait_limit)
        except ChannelRefusal as exc:
            await self._refuse(env.sender, env.channel, exc.message, env.payload)

    def _announce(self, env: Envelope, delivered: tuple[str, ...]) -> None:
        publish = self.bus.publish
        publish(MessageSent(message_id=env.id, channel=env.channel, sender=env.sender,
                            delivered_to=delivered, payload=env.payload))
        for r in delivered:
            publish(MessageDelivered(message_id=env.id, channel=env.channel, receiver=r))

    async def _refuse(
        self, sender: str, channel: str, reason: str, payload: Any
    ) -> typing.NoReturn:
        if isinstance(payload, BaseModel):
            payload = payload.model_dump()
        if self._record is not None:
            await self._record.refusal(sender, channel, reason, payload)
        logger.info("refused send from %s on %s: %s", sender, channel, reason)
        self.bus.publish(MessageRefused(sender=sender, channel=channel, reason=reason))
        raise ChannelRefusal(reason)


__all__ = [
    "MESSAGE_IGNORE_SQL",
    "ChannelHub",
    "PayloadValidator",
    "compile_validator",
    "describe_validation_error",
    "logger",
    "payload_size",
]
