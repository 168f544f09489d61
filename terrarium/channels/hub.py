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

import copy
import dataclasses
import json
import logging
import time
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from terrarium.channels.bus import EventBus
from terrarium.channels.envelope import Envelope, _id_of, _time_ns, new_message_id
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
from terrarium.channels.transport import NowaitPut, Receiver, Transport, WaitPut
from terrarium.channels.writer import LogWriter
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, RegistryError, RuntimeFailure, closest_name
from terrarium.events import MessageConsumed, MessageDelivered, MessageRefused, MessageSent

logger = logging.getLogger("terrarium.channels")

# a brokered message may be sent again under the same id (a turn re-run after a crash)
MESSAGE_IGNORE_SQL = MESSAGE_SQL.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)

PayloadValidator = Callable[[Any], dict[str, Any]]
SizeCheck = Callable[[dict[str, Any], int], bool]  # (body, max_bytes) -> surely fits


class _Route:
    """Everything one (sender, channel) send needs, computed once.

    ``puts`` are the targets' non-blocking inbox puts (``Transport.nowait_put``), looked up
    once here so a send that finds room costs one call per receiver; ``waits`` the matching
    waiting puts (``Transport.wait_put``) for a full inbox; ``taps`` the non-blocking puts
    of the channel's observers (the sender excluded). ``check`` is the schema's compiled
    pydantic-core validator and ``flat`` tells that its instance ``__dict__`` is the dump
    (see ``compile_validator``): called inline, not through a wrapper; ``fields`` the
    cheaper validator returning the body dict for the fast path (``_fields_validator``; None:
    no schema, or only the model's own will do), which checks the size too when it can
    (``_bounded_fields_validator``; then ``fast_fits`` is None). ``fits`` tells,
    without encoding it, that a validated body is surely under ``max_bytes`` (see
    ``_fits_check``). ``one`` is the single inbox put of a 1-listener queue (the common
    case: no round-robin to keep).
    """

    __slots__ = ("broadcast", "channel", "check", "fast_fits", "fields", "fits", "flat",
                 "max_bytes", "one", "ones", "puts", "rr", "schema_name", "taps", "targets",
                 "validate", "waits")

    def __init__(
        self,
        spec: ChannelSpec,
        targets: tuple[str, ...],
        validate: bool,
        puts: tuple[NowaitPut, ...] = (),
        taps: tuple[tuple[str, NowaitPut], ...] = (),
        waits: tuple[WaitPut, ...] = (),
    ) -> None:
        self.channel = spec.name
        self.schema_name = spec.schema_name or spec.name
        self.broadcast = spec.kind == "broadcast"
        self.targets = targets
        model = spec.validator if validate else None
        self.validate = compile_validator(model) if model is not None else None
        self.check, self.flat = _validator_parts(model) if model is not None else (None, True)
        self.fits = _fits_check(model, spec.max_bytes)
        self.fields, self.fast_fits = None, self.fits
        if model is not None and self.flat:
            bounded = _bounded_fields_validator(model, spec.max_bytes)
            if bounded is not None:
                self.fields, self.fast_fits = bounded, None
            else:
                self.fields = _fields_validator(model)
        self.max_bytes = spec.max_bytes
        self.rr = 0
        self.puts = puts
        self.waits = waits
        self.one = puts[0] if len(puts) == 1 and not self.broadcast else None
        self.taps = taps
        self.ones = tuple((t,) for t in targets)  # a queue send's result, made once


def _plain(annotation: Any) -> bool:
    """True when values of this type stay plain data in a model's ``__dict__``."""
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation):
            return False
        if typing.is_typeddict(annotation):
            return False
    return all(_plain(a) for a in typing.get_args(annotation))


def _validator_parts(model: type[BaseModel]) -> tuple[Callable[[Any], Any], bool]:
    """The model's compiled pydantic-core ``validate_python`` and whether it is *flat* (no
    nested models, dataclasses, extras or custom serializers): then a validated instance's
    ``__dict__`` already is its dump."""
    decorators = model.__pydantic_decorators__
    flat = (
        model.model_config.get("extra") != "allow"
        and not decorators.field_serializers
        and not decorators.model_serializers
        and not model.model_computed_fields
        and all(_plain(f.annotation) for f in model.model_fields.values())
    )
    return model.__pydantic_validator__.validate_python, flat


def _fields_schema(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A copy of a flat model's core schema for its fields (pydantic-core's
    ``model-fields``) and the model's config. None when the model's schema is anything but
    a plain model over its fields (a model validator, a custom ``__init__``,
    ``model_post_init``, a root model, definitions): only the model validator will do."""
    try:
        schema = model.__pydantic_core_schema__
        if (
            schema.get("type") != "model"
            or schema.get("custom_init")
            or schema.get("root_model")
            or schema.get("post_init")
            or schema["schema"].get("type") != "model-fields"
            or model.__pydantic_decorators__.model_validators
        ):
            return None
        return copy.deepcopy(schema["schema"]), dict(schema.get("config") or {})
    except Exception:  # an incomplete model (forward references): the model decides
        return None


# a model field's keys that a typed-dict field means the same by (no validation alias)
_FIELD_KEYS = frozenset({"type", "schema", "metadata", "frozen", "serialization_exclude",
                         "serialization_alias"})


def _dict_validator(fields: dict[str, Any], config: dict[str, Any]) -> Callable[[Any], Any] | None:
    """The model's fields as a pydantic-core ``typed-dict`` schema: the same field schemas
    (checks, coercions, defaults, field validators), extras and config, returning the body
    dict itself, with no model instance and no fields-set to build (half a model
    validation). None when a field needs what a typed dict does not mean the same by."""
    if fields.get("extras_schema") is not None or fields.get("computed_fields"):
        return None
    typed: dict[str, Any] = {}
    for name, f in fields["fields"].items():
        if not f.keys() <= _FIELD_KEYS:
            return None
        typed[name] = {"type": "typed-dict-field", "schema": f["schema"],
                       "required": f["schema"].get("type") != "default"}
    schema: dict[str, Any] = {
        "type": "typed-dict", "fields": typed,
        "extra_behavior": fields.get("extra_behavior")
        or config.get("extra_fields_behavior") or "ignore",
        "config": config,  # a typed dict's field validators read their config from here
    }
    if "strict" in fields:
        schema["strict"] = fields["strict"]
    try:
        return SchemaValidator(schema, config).validate_python  # type: ignore[arg-type]
    except Exception:  # pydantic-core refused it: the model validator will do
        return None


def _fields_validator(model: type[BaseModel]) -> Callable[[Any], Any] | None:
    """A validator returning the body dict that accepts, refuses and fills in exactly as
    the model does (``_dict_validator`` over ``_fields_schema``); None: use the model."""
    plain = _fields_schema(model)
    return _dict_validator(*plain) if plain is not None else None


# what a str or int field's own schema may hold for the bound below to stay exact: nothing
# that changes the value's length after the length is checked (case maps, coercions)
_STR_KEYS = frozenset({"type", "metadata", "ref", "strict", "min_length", "max_length",
                       "pattern", "regex_engine", "strip_whitespace", "serialization"})
_INT_KEYS = frozenset({"type", "metadata", "ref", "strict", "serialization"})


def _bounded_fields_validator(model: type[BaseModel], limit: int) -> Callable[[Any], Any] | None:
    """``_fields_validator`` with ``max_bytes`` checked inside it: each str field takes at
    most its share of the characters ``_fits_check`` allows, each int at most
    ``_INT_BOUND``, so a body it accepts surely fits ``limit`` and the send skips the size
    test. What it refuses (a bad payload, or one that may be too big) the model's own
    validator and the exact size check decide. None when the schema is not plain scalars
    whose length nothing changes after validation (see ``_STR_KEYS``)."""
    plain = _fields_schema(model)
    if plain is None or not _json_plain_model(model):
        return None
    plan = _scalar_plan(model)
    if plan is None or plan[0] > limit:
        return None
    fixed, skeys, ikeys = plan
    share = (limit - fixed) // 6 // max(1, len(skeys))
    fields_schema, config = plain
    if config.get("str_to_upper") or config.get("str_to_lower") or config.get(
            "coerce_numbers_to_str"):
        return None
    for name, field in fields_schema["fields"].items():
        inner = field["schema"]
        default: Any = None
        if inner.get("type") == "default":
            if "default_factory" in inner:
                return None
            default = inner.get("default")
            inner = inner["schema"]
        if inner.get("type") == "nullable":
            inner = inner["schema"]
        if name in skeys:
            if inner.get("type") != "str" or not inner.keys() <= _STR_KEYS:
                return None
            if isinstance(default, str) and len(default) > share:
                return None
            inner["max_length"] = min(inner.get("max_length", share), share)
        elif name in ikeys:
            if inner.get("type") != "int" or not inner.keys() <= _INT_KEYS:
                return None
            if isinstance(default, int) and not -_INT_BOUND < default < _INT_BOUND:
                return None
            inner["gt"], inner["lt"] = -_INT_BOUND, _INT_BOUND
    return _dict_validator(fields_schema, config)


def compile_validator(model: type[BaseModel]) -> PayloadValidator:
    """A fast payload validator returning the validated fields as a plain dict.

    Uses the model's compiled pydantic-core validator directly. For flat models (no nested
    models, dataclasses, extras or custom serializers) the instance ``__dict__`` already is
    the dump, which halves the cost; otherwise ``model_dump`` is used.
    """
    validate, flat = _validator_parts(model)
    if flat:
        return lambda payload: validate(payload).__dict__
    return lambda payload: validate(payload).model_dump()


_JSON_SCALARS = (str, int, float, bool, type(None))
_JSON_CONTAINERS = (list, tuple, dict)


def _json_plain(annotation: Any) -> bool:
    """True when every value of this type is JSON data whose ``repr`` is at least a quarter
    of its UTF-8 JSON size: str, int, float, bool, None, and lists, tuples, dicts of them."""
    if annotation in _JSON_SCALARS:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return all(type(a) in _JSON_SCALARS for a in typing.get_args(annotation))
    args = typing.get_args(annotation)
    if origin in _JSON_CONTAINERS or origin is typing.Union or origin is types.UnionType:
        return bool(args) and all(a is Ellipsis or _json_plain(a) for a in args)
    return False


def _json_plain_model(model: type[BaseModel] | None) -> bool:
    """Whether a validated body of ``model`` is plain JSON data (see ``_json_plain``)."""
    if model is None or model.model_config.get("extra") == "allow":
        return False
    return all(_json_plain(f.annotation) for f in model.model_fields.values())


_INT_BOUND = 10**15  # |n| below this: at most 16 JSON bytes


def _scalar_plan(model: type[BaseModel]) -> tuple[int, tuple[str, ...], tuple[str, ...]] | None:
    """For a schema of scalar fields (str, bool, float, int, None, Literal): the most UTF-8
    JSON bytes its body takes besides its strings' characters and its ints' digits (within
    ``_INT_BOUND``), and its str and int fields. None for any other schema."""
    fixed = 2  # {}
    str_keys: list[str] = []
    int_keys: list[str] = []
    for name, f in model.model_fields.items():
        fixed += 6 * len(name) + 4  # "key": and a comma
        kinds = set(typing.get_args(f.annotation)) if _is_union(f.annotation) else {f.annotation}
        kinds.discard(type(None))
        fixed += 4  # null
        if kinds <= {str}:
            str_keys.append(name)
            fixed += 2
        elif kinds <= {int}:
            int_keys.append(name)
            fixed += 17
        elif kinds <= {bool}:
            fixed += 5
        elif kinds <= {float}:
            fixed += 24  # repr(float) is at most 24 characters; Infinity is 9
        elif len(kinds) == 1 and typing.get_origin(next(iter(kinds))) is typing.Literal:
            fixed += max(6 * len(repr(a)) for a in typing.get_args(next(iter(kinds))))
        else:
            return None
    return fixed, tuple(str_keys), tuple(int_keys)


def _fits_check(model: type[BaseModel] | None, limit: int) -> SizeCheck:
    """A per-schema test that a validated body surely fits ``limit`` UTF-8 JSON bytes.

    False means "not sure", and the send measures the JSON. A schema of scalar fields
    (str, bool, float, int, None, Literal; the usual case) is bounded from its strings'
    lengths: 6 bytes a character at most (an escape), a fixed allowance for the rest. Any
    other plain-JSON schema is bounded by ``4 * len(repr(body))``; others never are.
    """
    if model is None:  # an unchecked body: bounded from its values, if plain and small
        return _rough_fits
    if not _json_plain_model(model):
        return _never
    plan = _scalar_plan(model)
    if plan is None:
        return _repr_fits
    fixed, skeys, ikeys = plan
    if fixed > limit:
        return _never
    room = (limit - fixed) // 6
    if len(skeys) == 1 and len(ikeys) <= 1:  # the usual schema: one text, maybe a number
        return _one_text_fits(skeys[0], ikeys[0] if ikeys else None, room)

    def fits(body: dict[str, Any], limit: int) -> bool:
        n = 0
        for k in skeys:
            v = body[k]
            if v is not None:
                n += len(v)
        for k in ikeys:
            v = body[k]
            if v is not None and not -_INT_BOUND < v < _INT_BOUND:
                return False
        return n <= room

    return fits


def _one_text_fits(skey: str, ikey: str | None, room: int) -> SizeCheck:
    """``_fits_check``'s bound for one string field and at most one int field, unrolled:
    it runs on every send."""
    if ikey is None:

        def fits(body: dict[str, Any], limit: int) -> bool:
            v = body[skey]
            return v is None or len(v) <= room

        return fits

    def fits_int(body: dict[str, Any], limit: int) -> bool:
        v = body[ikey]
        if v is not None and not -_INT_BOUND < v < _INT_BOUND:
            return False
        v = body[skey]
        return v is None or len(v) <= room

    return fits_int


def _is_union(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin is typing.Union or origin is types.UnionType


def _never(body: dict[str, Any], limit: int) -> bool:
    return False


def _rough_fits(body: dict[str, Any], limit: int) -> bool:
    return payload_size(body, limit) == 0


def payload_size(payload: Mapping[str, Any], limit: int) -> int:
    """The payload's size as UTF-8 JSON, or 0 when it is surely under ``limit``.

    A payload of a few short scalars (the usual case) is bounded from its string lengths
    without encoding it; anything else is encoded once.
    """
    rough = 0
    for k, v in payload.items():
        if isinstance(v, str):
            rough += 4 * len(v) + 8  # at most 4 bytes a character, escapes aside
        elif isinstance(v, float) or v is None or (
            isinstance(v, int) and -_INT_BOUND < v < _INT_BOUND
        ):
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


_fresh = Envelope.fresh


_tuple_new = tuple.__new__
_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _repr_fits(body: dict[str, Any], limit: int) -> bool:
    """True when a plain-JSON body surely fits in ``limit`` bytes of UTF-8 JSON.

    For str, int, float, bool, None and containers of them, each ``repr`` character stands
    for at most 4 JSON bytes (a character's UTF-8 is at most 4 bytes, an escape at most 6
    for a 2+ character repr escape; ``inf`` is ``Infinity``), so ``4 * len(repr)`` bounds it.
    """
    try:
        return 4 * len(repr(body)) <= limit
    except ValueError:  # an int too long for str(): let the JSON encoder decide
        return False


def _put_round_robin(route: _Route, env: Envelope) -> tuple[str, ...] | None:
    """A queue send that finds room: into the first inbox with room from the one whose turn
    it is, without waiting (a plain call, not a coroutine: the common case). None, with
    nothing done, when every inbox is full."""
    puts = route.puts
    n = len(puts)
    i = route.rr
    for _ in range(n):
        try:
            puts[i](env)
        except anyio.WouldBlock:
            i = i + 1 if i + 1 < n else 0
            continue
        route.rr = i + 1 if i + 1 < n else 0
        return route.ones[i]
    return None


def _put_all(route: _Route, env: Envelope) -> int:
    """A broadcast's first pass, without waiting: into every inbox in order until one is
    full. Returns how many got it (all of them in the common case)."""
    k = 0
    for put in route.puts:
        try:
            put(env)
        except anyio.WouldBlock:
            return k
        k += 1
    return k


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
        observers: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """``observers``: {creature: channels} it gets a copy of every message on without
        listening there (see :meth:`observed`); only with an in-process transport."""
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
        # no log to write first, no broker to hand to: a send puts straight into inboxes
        self._direct = self._writer is None and not self.transport.brokered
        self._tg: anyio.abc.TaskGroup | None = None
        self._replayed: set[tuple[str, str]] = set()

        # Every inbox exists before anything can be sent.
        listeners: dict[str, list[str]] = {name: [] for name in self.specs}
        for w in self.wiring.values():
            for ch in w.listen:
                listeners[ch].append(w.name)
        self._listeners = {ch: tuple(names) for ch, names in listeners.items()}
        self._observers = self._check_observers(observers or {})
        watching: dict[str, list[str]] = {name: [] for name in self.specs}
        for name, chans in self._observers.items():
            for ch in chans:
                watching[ch].append(name)
        self.observer_missed: dict[str, int] = dict.fromkeys(self._observers, 0)
        self.transport.bind(self.specs, self.wiring)
        self._inboxes: dict[str, Receiver] = {}
        for w in self.wiring.values():
            heard = set(w.listen) | set(self._observers.get(w.name, ()))
            if heard:
                cap = sum(self.specs[ch].capacity for ch in heard)
                self._inboxes[w.name] = self.transport.open_inbox(w.name, cap)

        local = not self.transport.brokered
        put = self.transport.nowait_put
        wait = self.transport.wait_put
        self._routes: dict[tuple[str, str], _Route] = {}
        # the routes ``send`` takes without the general path (see there)
        self._fast: dict[tuple[str, str], _Route] = {}
        for w in self.wiring.values():
            for ch in w.can_send:
                spec = self.specs[ch]
                targets = self._listeners[ch]
                if spec.kind == "broadcast":
                    targets = tuple(t for t in targets if t != w.name)
                puts = tuple(put(t) for t in targets) if local else ()
                waits = tuple(wait(t) for t in targets) if local else ()
                taps = tuple((o, put(o)) for o in watching[ch] if o != w.name)
                route = _Route(spec, targets, validate, puts, taps, waits)
                self._routes[(w.name, ch)] = route
                checked = route.check is None or route.fields is not None
                if self._direct and targets and checked and route.fits is not _never:
                    self._fast[(w.name, ch)] = route

    def _check_observers(self, observers: Mapping[str, Iterable[str]]
                         ) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for name, chans in observers.items():
            chans = tuple(dict.fromkeys(chans))
            if not chans:
                continue
            if self.transport.brokered:
                raise RuntimeFailure(
                    f"{type(self.transport).__name__} routes by itself, so creature {name!r} "
                    "cannot observe channels there; observers need the in-process transport."
                )
            w = self.wiring.get(name)
            if w is None:
                raise RuntimeFailure(f"Observer {name!r} is not a creature of this team.")
            for ch in chans:
                if ch not in self.specs:
                    raise RuntimeFailure(
                        f"Creature {name!r} observes channel {ch!r}, which does not exist."
                    )
                if ch in w.listen:
                    raise RuntimeFailure(
                        f"Creature {name!r} both listens to and observes channel {ch!r}; "
                        "a listener already gets its messages, so choose one."
                    )
            out[name] = chans
        return out

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

    def observed(self, creature: str) -> tuple[str, ...]:
        """The channels ``creature`` observes: it gets a copy of each message sent there.

        An observer is not a receiver: a queue message still goes to exactly one listener,
        the copy is not in the message's logged receivers (so a resumed run does not replay
        it), and a send never waits for an observer. When the observer's inbox is full the
        copy is dropped for it alone, counted in ``observer_missed`` and logged as a warning.
        """
        return self._observers.get(creature, ())

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
        route = self._fast.get((sender, channel))
        if route is None or type(payload) is not dict:
            return await self._send(sender, channel, payload, reply_to, correlation_id,
                                    wait_limit, key, message_id)
        # the fast path (no log, no broker, a listener, a plain-dict payload): every step
        # is inline, and whatever is not the plain case (a refusal, a body that may be too
        # big) is left to the general path before anything is done
        fields = route.fields
        if fields is not None:
            try:
                body = fields(payload)
            except ValidationError:
                return await self._send(sender, channel, payload, reply_to, correlation_id,
                                        wait_limit, key, message_id)
        else:  # unchecked (a fast route checks through ``fields`` or not at all)
            body = payload
        fits = route.fast_fits
        if fits is not None and not fits(body, route.max_bytes):
            return await self._send(sender, channel, payload, reply_to, correlation_id,
                                    wait_limit, key, message_id)
        ns = _time_ns()  # Envelope.fresh, inlined: it is a fifth of this path
        env = _tuple_new(Envelope, (
            message_id or _id_of(ns), channel, sender, route.schema_name, body, ns / 1e9,
            reply_to, correlation_id,
        ))
        one = route.one
        if one is not None:  # a queue with one listener
            delivered = route.targets
            try:
                one(env)
            except anyio.WouldBlock:
                await self._wait_deliver(env, delivered[0], (), wait_limit, route.waits[0])
        elif route.broadcast:
            delivered = route.targets
            k = _put_all(route, env)
            if k < len(delivered):
                await self._fan_out(route, env, wait_limit, k)
        else:
            delivered = _put_round_robin(route, env)
            if delivered is None:
                delivered = await self._round_robin(route, env, wait_limit)
        if route.taps:
            self._tap(route, env)
        if _CRASH_ARMED:
            crashpoint("hub.send.delivered")
        if self.bus._subs:
            self._announce(env, delivered)
        return _tuple_new(SendResult, (env, delivered))  # SendResult(env, delivered)

    async def _send(
        self,
        sender: str,
        channel: str,
        payload: Mapping[str, Any] | BaseModel,
        reply_to: str | None,
        correlation_id: str | None,
        wait_limit: float | None,
        key: str | None,
        message_id: str | None,
    ) -> SendResult:
        """``send`` in every case: a log, a broker, a refusal, a payload to convert."""
        if key is not None and self.log is not None:
            if _CRASH_ARMED:
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
        if type(payload) is not dict and isinstance(payload, BaseModel):
            payload = payload.model_dump()
        check = route.check
        if check is not None:
            try:
                body = check(payload).__dict__ if route.flat else check(payload).model_dump()
            except ValidationError as e:
                reason = (
                    f"The payload does not match the schema {route.schema_name!r} of channel "
                    f"{channel!r}: {describe_validation_error(e)}."
                )
                await self._refuse(sender, channel, reason, payload)
        else:
            body = payload if type(payload) is dict else dict(payload)
        # the size check: bounded from the schema when it can be, else the JSON is measured
        if not route.fits(body, route.max_bytes):
            size = payload_size(body, route.max_bytes)
            if size > route.max_bytes:
                reason = (
                    f"The message is {size} bytes; channel {channel!r} takes at most "
                    f"{route.max_bytes} (its max_bytes). Send less, or split it."
                )
                await self._refuse(sender, channel, reason, {"bytes": size})
        env = _fresh(channel, sender, route.schema_name, body, reply_to, correlation_id,
                     message_id)
        if self._direct:
            # the fast path: every put that finds room is one call, no await, no task
            one = route.one
            if one is not None:  # a queue with one listener
                delivered = targets
                try:
                    one(env)
                except anyio.WouldBlock:
                    await self._wait_deliver(env, targets[0], (), wait_limit, route.waits[0])
            elif route.broadcast:
                delivered = await self._fan_out(route, env, wait_limit)
            else:
                delivered = await self._round_robin(route, env, wait_limit)
        elif self.transport.brokered:
            delivered = await self._publish(route, env, wait_limit)
        elif route.broadcast:
            await self._writer.write(MESSAGE_SQL, message_row(self.run_id, env, targets, key))
            if _CRASH_ARMED:
                crashpoint("hub.send.logged")
            delivered = await self._fan_out(route, env, wait_limit)
        else:
            delivered = await self._deliver_one(route, env, wait_limit, key)
        if route.taps:
            self._tap(route, env)
        if _CRASH_ARMED:
            crashpoint("hub.send.delivered")
        if self.bus._subs:
            self._announce(env, delivered)
        return _tuple_new(SendResult, (env, delivered))  # SendResult(env, delivered)

    async def _round_robin(
        self, route: _Route, env: Envelope, wait_limit: float | None
    ) -> tuple[str, ...]:
        """A queue with several listeners: the first inbox with room from the one whose
        turn it is; when all are full, wait on that one."""
        delivered = _put_round_robin(route, env)
        if delivered is not None:
            return delivered
        i = route.rr
        route.rr = i + 1 if i + 1 < len(route.puts) else 0
        await self._wait_deliver(env, route.targets[i], (), wait_limit, route.waits[i])
        return route.ones[i]

    async def _fan_out(
        self, route: _Route, env: Envelope, wait_limit: float | None, start: int = 0
    ) -> tuple[str, ...]:
        """A broadcast: the one shared envelope into every inbox with room, no task and no
        copy per receiver; the sender waits only on a full inbox, in receiver order.
        ``start``: the receivers before it have it already (see ``_put_all``)."""
        targets = route.targets
        waits = route.waits
        puts = route.puts
        for k in range(start, len(puts)):
            try:
                puts[k](env)
            except anyio.WouldBlock:
                await self._wait_deliver(env, targets[k], targets[:k], wait_limit, waits[k])
        return targets

    def _tap(self, route: _Route, env: Envelope) -> None:
        """Copies for the channel's observers: never waits; a full observer misses it."""
        for name, put in route.taps:
            try:
                put(env)
            except anyio.WouldBlock:
                self.observer_missed[name] += 1
                logger.warning(
                    "observer %s missed message %s on %s: its inbox is full (%d missed)",
                    name, env.id, env.channel, self.observer_missed[name],
                )

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
                message_id=env.id, channel=env.channel, sender=env.sender, delivered_to=delivered,
                payload=env.payload,
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
        self, env: Envelope, target: str, already: tuple[str, ...], wait_limit: float | None,
        wait: WaitPut | None = None,
    ) -> None:
        """Put ``env`` in ``target``'s full inbox, waiting for room at most ``wait_limit``
        seconds. ``wait``: the route's waiting put for it (else ``Transport.deliver``).
        An unbounded wait opens no cancel scope: it is the common case under load (a fast
        sender waits here once per inbox-full of messages)."""
        if wait_limit is not None and wait_limit < 0:
            wait_limit = self.send_timeout
        if wait_limit is None:
            if wait is not None:
                await wait(env)
            else:
                await self.transport.deliver(target, env)
            return
        try:
            with anyio.fail_after(wait_limit):
                if wait is not None:
                    await wait(env)
                else:
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
