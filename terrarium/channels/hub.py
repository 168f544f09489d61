"""The channel hub: the one object the runtime sends and receives through.

Built from channel specs and the team's wiring, it opens every inbox up front (nothing
sent at startup can be lost), checks each send (permission, schema, listeners), writes it
to the durable log, then hands it to the transport.

Semantics
- ``queue``: exactly one listener gets each message. Listeners are served round-robin,
  skipping a listener whose inbox is full; when all are full the sender waits on the
  listener whose turn it is. Round-robin keeps the split even among busy listeners while
  skip-if-full lets an idle one absorb a burst.
- ``broadcast``: every listener except the sender gets the same (immutable) envelope; the
  sender waits on each full inbox in turn.
- Backpressure: a send waits while a target inbox is full, up to ``wait_limit`` seconds
  (hub default ``send_timeout``; None = wait forever). Running out of it is a refusal that names
  who already got the message.
- With a log, the message row (with its intended receivers) is committed before any
  delivery; concurrent senders share one commit (see ``LogWriter``).
- Every refusal is raised as ``ChannelRefusal``, written to the log, logged and published
  as ``MessageRefused``. Nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
from pydantic import BaseModel, ValidationError

from terrarium.channels.bus import EventBus
from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.local import LocalTransport
from terrarium.channels.log import (
    CONSUME_SQL,
    MESSAGE_SQL,
    REFUSAL_SQL,
    DurableLog,
    message_row,
    refusal_row,
)
from terrarium.channels.spec import ChannelSpec, CreatureWiring, SendResult
from terrarium.channels.transport import Receiver, Transport
from terrarium.channels.writer import LogWriter
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, RegistryError, RuntimeFailure, closest_name
from terrarium.events import MessageConsumed, MessageDelivered, MessageRefused, MessageSent

logger = logging.getLogger("terrarium.channels")

# a brokered message may be sent again under the same id (a turn re-run after a crash)
MESSAGE_IGNORE_SQL = MESSAGE_SQL.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)

PayloadValidator = Callable[[Any], dict[str, Any]]


class _Route:
    """Everything one (sender, channel) send needs, computed once."""

    __slots__ = ("broadcast", "channel", "max_bytes", "rr", "schema_name", "targets", "validate")

    def __init__(
        self,
        spec: ChannelSpec,
        targets: tuple[str, ...],
        validate: PayloadValidator | None,
    ) -> None:
        self.channel = spec.name
        self.schema_name = spec.schema_name or spec.name
        self.broadcast = spec.kind == "broadcast"
        self.targets = targets
        self.validate = validate
        self.max_bytes = spec.max_bytes
        self.rr = 0


def _plain(annotation: Any) -> bool:
    """True when values of this type stay plain data in a model's ``__dict__``."""
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation):
            return False
        if typing.is_typeddict(annotation):
            return False
    return all(_plain(a) for a in typing.get_args(annotation))


def compile_validator(model: type[BaseModel]) -> PayloadValidator:
    """A fast payload validator returning the validated fields as a plain dict.

    Uses the model's compiled pydantic-core validator directly. For flat models (no nested
    models, dataclasses, extras or custom serializers) the instance ``__dict__`` already is
    the dump, which halves the cost; otherwise ``model_dump`` is used.
    """
    validate = model.__pydantic_validator__.validate_python
    decorators = model.__pydantic_decorators__
    flat = (
        model.model_config.get("extra") != "allow"
        and not decorators.field_serializers
        and not decorators.model_serializers
        and not model.model_computed_fields
        and all(_plain(f.annotation) for f in model.model_fields.values())
    )
    if flat:
        return lambda payload: validate(payload).__dict__
    return lambda payload: validate(payload).model_dump()


def payload_size(payload: Mapping[str, Any], limit: int) -> int:
    """The payload's size as UTF-8 JSON, or 0 when it is surely under ``limit``.

    A payload of a few short scalars (the usual case) is bounded from its string lengths
    without encoding it; anything else is encoded once.
    """
    rough = 0
    for k, v in payload.items():
        if isinstance(v, str):
            rough += 4 * len(v) + 8  # at most 4 bytes a character, escapes aside
        elif isinstance(v, (int, float, bool)) or v is None:
            rough += 32
        else:
            rough = limit
            break
        rough += 4 * len(k) + 8
        if rough >= limit // 2:
            break
    if rough < limit // 2:
        return 0
    return len(_json_dumps(payload).encode("utf-8", "replace"))


_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def describe_validation_error(err: ValidationError) -> str:
    """All pydantic errors in one readable sentence fragment."""
    parts = []
    for e in err.errors(include_url=False):
        loc = ".".join(str(p) for p in e["loc"]) or "payload"
        parts.append(f"field {loc!r}: {e['msg']}")
    return "; ".join(parts)


class ChannelHub:
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
    ) -> None:
        self.specs: dict[str, ChannelSpec] = {}
        for spec in channels:
            if spec.name in self.specs:
                raise RegistryError(f"Channel {spec.name!r} is defined twice.")
            self.specs[spec.name] = spec
        self.wiring: dict[str, CreatureWiring] = {}
        for w in creatures:
            if w.name in self.wiring:
                raise RegistryError(f"Creature {w.name!r} is wired twice.")
            for ch in (*w.listen, *w.can_send):
                if ch not in self.specs:
                    raise RuntimeFailure(
                        f"Creature {w.name!r} is wired to channel {ch!r}, which does not exist."
                    )
            self.wiring[w.name] = w
        self.transport = transport or LocalTransport()
        self.bus = bus or EventBus()
        self.validate = validate
        self.send_timeout = send_timeout
        self.log = log
        self.run_id = run_id or (log.start_run(terrarium_name) if log is not None else "")
        self._writer = LogWriter(log, offload=offload_log) if log is not None else None
        self._tg: anyio.abc.TaskGroup | None = None
        self._replayed: set[tuple[str, str]] = set()

        # Every inbox exists before anything can be sent.
        listeners: dict[str, list[str]] = {name: [] for name in self.specs}
        for w in self.wiring.values():
            for ch in w.listen:
                listeners[ch].append(w.name)
        self._listeners = {ch: tuple(names) for ch, names in listeners.items()}
        self.transport.bind(self.specs, self.wiring)
        self._inboxes: dict[str, Receiver] = {}
        for w in self.wiring.values():
            if w.listen:
                cap = sum(self.specs[ch].capacity for ch in set(w.listen))
                self._inboxes[w.name] = self.transport.open_inbox(w.name, cap)

        validators: dict[str, PayloadValidator | None] = {
            name: compile_validator(s.validator) if (validate and s.validator) else None
            for name, s in self.specs.items()
        }
        self._routes: dict[tuple[str, str], _Route] = {}
        for w in self.wiring.values():
            for ch in w.can_send:
                spec = self.specs[ch]
                targets = self._listeners[ch]
                if spec.kind == "broadcast":
                    targets = tuple(t for t in targets if t != w.name)
                self._routes[(w.name, ch)] = _Route(spec, targets, validators[ch])

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> ChannelHub:
        if self._writer is not None:
            self._tg = anyio.create_task_group()
            await self._tg.__aenter__()
            await self._tg.start(self._writer.run)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        try:
            if self._writer is not None:
                await self._writer.aclose()
            await self.transport.aclose()
        finally:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
                await self._tg.__aexit__(exc_type, exc, tb)
                self._tg = None
        return None

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
        return self._listeners[channel]

    # -- sending -----------------------------------------------------------------------

    async def send(
        self,
        sender: str,
        channel: str,
        payload: Mapping[str, Any] | BaseModel,
        *,
        reply_to: str | None = None,
        correlation_id: str | None = None,
        wait_limit: float | None = -1.0,
        key: str | None = None,
        message_id: str | None = None,
    ) -> SendResult:
        """Validate, log, deliver; returns who got it. Raises ``ChannelRefusal``.

        ``wait_limit`` bounds the wait for full inboxes (-1: the hub's ``send_timeout``).
        ``key`` is the send's deterministic id (a turn's send: run, creature, the message
        the turn consumes, the call's place in it). With a log, a second send with a key
        already logged is recognized as done: nothing is delivered again (a resumed run
        redelivers the logged copy if it was not consumed) and the first result comes back.
        ``message_id`` (brokered transports) names the message so that a turn run again
        after a crash re-sends under the same id, which the broker deduplicates.
        """
        if key is not None and self.log is not None:
            crashpoint("hub.send.check")
            seen = self.log.sent_with_key(self.run_id, key)
            if seen is not None:
                return SendResult(*seen)
        route = self._routes.get((sender, channel))
        if route is None:
            await self._refuse(sender, channel, self._route_problem(sender, channel), payload)
        targets = route.targets
        if not targets:
            await self._refuse(sender, channel, self._no_listener(sender, channel), payload)
        if isinstance(payload, BaseModel):
            payload = payload.model_dump()
        validate = route.validate
        if validate is not None:
            try:
                body = validate(payload)
            except ValidationError as e:
                reason = (
                    f"The payload does not match the schema {route.schema_name!r} of channel "
                    f"{channel!r}: {describe_validation_error(e)}."
                )
                await self._refuse(sender, channel, reason, payload)
        else:
            body = payload if type(payload) is dict else dict(payload)
        size = payload_size(body, route.max_bytes)
        if size > route.max_bytes:
            reason = (
                f"The message is {size} bytes; channel {channel!r} takes at most "
                f"{route.max_bytes} (its max_bytes). Send less, or split it."
            )
            await self._refuse(sender, channel, reason, {"bytes": size})
        env = Envelope.trusted(
            message_id or new_message_id(),
            channel,
            sender,
            route.schema_name,
            body,
            time.time(),
            reply_to,
            correlation_id,
        )
        if self.transport.brokered:
            delivered = await self._publish(route, env, wait_limit)
        elif route.broadcast:
            if self._writer is not None:
                await self._writer.write(MESSAGE_SQL, message_row(self.run_id, env, targets, key))
                crashpoint("hub.send.logged")
            delivered = await self._deliver_all(env, targets, wait_limit)
        else:
            delivered = await self._deliver_one(route, env, wait_limit, key)
        crashpoint("hub.send.delivered")
        if self.bus._subs:
            self._announce(env, delivered)
        return SendResult(env, delivered)

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
        route = self._routes.get((sender, channel))
        if route is None:
            await self._refuse(sender, channel, self._route_problem(sender, channel), None)
        targets = route.targets
        if not targets:
            await self._refuse(sender, channel, self._no_listener(sender, channel), None)
        items = [p.model_dump() if isinstance(p, BaseModel) else p for p in payloads]
        keys = list(ids) if ids is not None else [None] * len(items)
        if len(keys) != len(items):
            raise ValueError(f"send_many got {len(keys)} ids for {len(items)} payloads")
        validate = route.validate
        if validate is not None:
            bodies = []
            for i, p in enumerate(items):
                try:
                    bodies.append(validate(p))
                except ValidationError as e:
                    reason = (
                        f"Payload #{i} does not match the schema {route.schema_name!r} of "
                        f"channel {channel!r}: {describe_validation_error(e)}."
                    )
                    await self._refuse(sender, channel, reason, p)
        else:
            bodies = [p if type(p) is dict else dict(p) for p in items]
        for i, b in enumerate(bodies):
            size = payload_size(b, route.max_bytes)
            if size > route.max_bytes:
                reason = (
                    f"Payload #{i} is {size} bytes; channel {channel!r} takes at most "
                    f"{route.max_bytes} (its max_bytes). Send less, or split it."
                )
                await self._refuse(sender, channel, reason, {"index": i, "bytes": size})
        done: dict[int, SendResult] = {}
        if self.log is not None:
            for i, k in enumerate(keys):
                seen = self.log.sent_with_key(self.run_id, k) if k is not None else None
                if seen is not None:
                    done[i] = SendResult(*seen)
        now = time.time()
        schema = route.schema_name
        fresh = [i for i in range(len(bodies)) if i not in done]
        envs = [
            Envelope.trusted(
                keys[i] or new_message_id(), channel, sender, schema, bodies[i], now, reply_to,
                correlation_id,
            )
            for i in fresh
        ]
        out: list[SendResult] = []
        if self.transport.brokered:
            for e in envs:
                out.append(SendResult(e, await self._publish(route, e, wait_limit)))
        elif self._writer is not None:
            if route.broadcast:
                plan = [(e, targets) for e in envs]
            else:  # round-robin without the room check: the whole batch is planned at once
                n = len(targets)
                plan = []
                for e in envs:
                    plan.append((e, (targets[route.rr],)))
                    route.rr = (route.rr + 1) % n
            run_id = self.run_id
            await self._writer.write_many(MESSAGE_SQL, [
                message_row(run_id, e, t, keys[i]) for i, (e, t) in zip(fresh, plan, strict=True)
            ])
            for e, t in plan:
                out.append(SendResult(e, await self._deliver_all(e, t, wait_limit)))
        elif route.broadcast:
            for e in envs:
                out.append(SendResult(e, await self._deliver_all(e, targets, wait_limit)))
        else:
            for e in envs:
                out.append(SendResult(e, await self._deliver_one(route, e, wait_limit)))
        if self.bus._subs:
            for r in out:
                self._announce(r.envelope, r.delivered_to)
        if done:  # the already-sent ones back in their places
            sent = iter(out)
            out = [done[i] if i in done else next(sent) for i in range(len(bodies))]
        return out

    def _announce(self, env: Envelope, delivered: tuple[str, ...]) -> None:
        publish = self.bus.publish
        publish(
            MessageSent(
                message_id=env.id, channel=env.channel, sender=env.sender, delivered_to=delivered
            )
        )
        for r in delivered:
            publish(MessageDelivered(message_id=env.id, channel=env.channel, receiver=r))

    async def _publish(
        self, route: _Route, env: Envelope, wait_limit: float | None
    ) -> tuple[str, ...]:
        """A brokered transport routes: log the message, then hand it over once.

        A queue message goes to whichever listener takes it first, so it names every
        candidate as one ``a|b`` receiver (one message, one eventual consumer).
        """
        targets = route.targets
        if self._writer is not None:
            await self._writer.write(MESSAGE_IGNORE_SQL, message_row(self.run_id, env, targets))
        if wait_limit is not None and wait_limit < 0:
            wait_limit = self.send_timeout
        try:
            await self.transport.publish(env, targets, route.broadcast, wait_limit)
        except ChannelRefusal as exc:
            await self._refuse(env.sender, env.channel, exc.message, env.payload)
        return targets if route.broadcast else ("|".join(targets),)

    async def _deliver_one(
        self, route: _Route, env: Envelope, wait_limit: float | None, key: str | None = None
    ) -> tuple[str, ...]:
        targets = route.targets
        n = len(targets)
        start = route.rr
        transport = self.transport
        if self._writer is None:
            for k in range(n):
                i = (start + k) % n
                if transport.try_deliver(targets[i], env):
                    route.rr = (i + 1) % n
                    return (targets[i],)
            route.rr = (start + 1) % n
            target = targets[start]
        else:
            target = targets[start]
            nxt = (start + 1) % n
            for k in range(n):
                i = (start + k) % n
                if transport.has_room(targets[i]):
                    target, nxt = targets[i], (i + 1) % n
                    break
            route.rr = nxt
            await self._writer.write(MESSAGE_SQL, message_row(self.run_id, env, (target,), key))
            crashpoint("hub.send.logged")
            if transport.try_deliver(target, env):
                return (target,)
        await self._wait_deliver(env, target, (), wait_limit)
        return (target,)

    async def _deliver_all(
        self, env: Envelope, targets: tuple[str, ...], wait_limit: float | None
    ) -> tuple[str, ...]:
        transport = self.transport
        done: list[str] = []
        for t in targets:
            if not transport.try_deliver(t, env):
                await self._wait_deliver(env, t, tuple(done), wait_limit)
            done.append(t)
        return targets

    async def _wait_deliver(
        self, env: Envelope, target: str, already: tuple[str, ...], wait_limit: float | None
    ) -> None:
        if wait_limit is not None and wait_limit < 0:
            wait_limit = self.send_timeout
        try:
            with anyio.fail_after(wait_limit):
                await self.transport.deliver(target, env)
        except TimeoutError:
            got = ", ".join(already) if already else "nobody"
            reason = (
                f"The inbox of {target!r} stayed full for {wait_limit:g}s, so message {env.id} on "
                f"channel {env.channel!r} was not delivered to it (delivered to {got})."
            )
            await self._refuse(env.sender, env.channel, reason, env.payload)

    # -- refusals ----------------------------------------------------------------------

    def _route_problem(self, sender: str, channel: str) -> str:
        if channel not in self.specs:
            close = closest_name(channel, self.specs)
            hint = f" Did you mean {close!r}?" if close else ""
            return f"Channel {channel!r} does not exist.{hint}"
        w = self.wiring.get(sender)
        if w is None:
            return f"{sender!r} is not a creature of this team, so it may not send on {channel!r}."
        allowed = ", ".join(sorted(w.can_send)) or "no channel"
        return (
            f"Creature {sender!r} may not send on channel {channel!r}; it may send on: {allowed}."
        )

    def _no_listener(self, sender: str, channel: str) -> str:
        if self._listeners[channel]:
            return (
                f"Channel {channel!r} has no listener other than {sender!r} itself, "
                "so nobody would receive the message."
            )
        return f"Channel {channel!r} has no listener, so nobody would receive the message."

    async def _refuse(
        self, sender: str, channel: str, reason: str, payload: Any
    ) -> typing.NoReturn:
        if isinstance(payload, BaseModel):
            payload = payload.model_dump()
        if self._writer is not None:
            await self._writer.write(
                REFUSAL_SQL, refusal_row(self.run_id, sender, channel, reason, payload)
            )
        logger.info("refused send from %s on %s: %s", sender, channel, reason)
        self.bus.publish(MessageRefused(sender=sender, channel=channel, reason=reason))
        raise ChannelRefusal(reason)

    # -- consumption and resume --------------------------------------------------------

    async def mark_consumed(self, receiver: str, message_ids: str | Iterable[str]) -> None:
        """Record that ``receiver``'s turn consumed these messages (idempotent), then tell
        the bus (after the write, so a watcher never sees a consumption the log lacks)."""
        ids = (message_ids,) if isinstance(message_ids, str) else tuple(message_ids)
        if self._writer is not None:
            now = time.time()
            crashpoint("hub.consume.before")
            await self._writer.write_many(
                CONSUME_SQL, [(mid, receiver, self.run_id, now) for mid in ids]
            )
            crashpoint("hub.consume.after")
            if self.bus._subs:
                for mid in ids:
                    self.bus.publish(MessageConsumed(message_id=mid, creature=receiver, ts=now))
        # a brokered transport takes the messages for good only now (memory: nothing to do)
        await self.transport.ack(receiver, ids)

    def resume(self) -> dict[str, int]:
        """Queue every logged, unconsumed message for its receiver; call before starting.

        Idempotent: a message is replayed at most once per hub, and consumed messages
        are never replayed. Returns how many each creature got back.
        """
        if self.log is None:
            raise RuntimeFailure("Resume needs the durable log, and this hub has none.")
        counts: dict[str, int] = {}
        for creature, inbox in self._inboxes.items():
            fresh = [
                e
                for e in self.log.unconsumed(self.run_id, creature)
                if (e.id, creature) not in self._replayed
            ]
            self._replayed.update((e.id, creature) for e in fresh)
            inbox.replay(fresh)
            counts[creature] = len(fresh)
        return counts

    @property
    def writer(self) -> LogWriter | None:
        return self._writer


__all__ = [
    "MESSAGE_IGNORE_SQL",
    "ChannelHub",
    "PayloadValidator",
    "compile_validator",
    "describe_validation_error",
    "logger",
    "payload_size",
]
