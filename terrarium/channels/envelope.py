"""The envelope every channel message travels in, and its time-ordered id.

Ids sort by creation time (nanoseconds first), then by a per-process random tag and a
counter, so a log ordered by id is ordered by send time and two processes never collide.

Two forms of one schema. ``EnvelopeWire`` is the pydantic model: the schema, and the form
at the boundaries (JSON to and from a broker, rows read back from the log are validated
through it). ``Envelope`` is the in-process form: an immutable tuple the hub makes once per
send and shares among receivers. Why not the model itself: building a model instance, even
bypassing validation, costs about twice the whole tuple, and the hub builds one per message
(the typed queue's budget is ~2 us a message). ``Envelope`` keeps the model's API:
attributes, ``Envelope(**fields)`` validates, ``model_dump``, ``model_dump_json``,
``model_validate``, ``model_validate_json``, ``model_fields``, ``to_json``/``from_json``,
``dict(env)``; it can be a field of a pydantic model (validated and dumped through the
wire model).
"""

from __future__ import annotations

import itertools
import os
import struct
import time
from collections import namedtuple
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic.fields import FieldInfo
from pydantic_core import core_schema
from pydantic_core import to_json as _to_json

_PROCESS_TAG = os.urandom(3).hex()
_time_ns = time.time_ns
_TAG_BYTES = bytes.fromhex(_PROCESS_TAG)


def _sequence(size: int) -> Callable[[], int]:
    """0, 1, ..., size - 1 and round again: a range iterator begun anew each round, so the
    id's sequence needs no mask a message (~340 instructions on 3.11)."""
    return itertools.chain.from_iterable(itertools.repeat(range(size))).__next__


_next = _sequence(1 << 32)  # the per-process sequence: the id's last 8 hex digits
# (ns, tag, seq) packed as 15 big-endian bytes, then hex: a fifth fewer instructions than
# the same bytes from one 120-bit int, twice as fast as formatting
_pack_id = struct.Struct(">Q3sI").pack


def _id_of(ns: int) -> str:
    return _pack_id(ns, _TAG_BYTES, _next()).hex()


def new_message_id() -> str:
    """A unique id that sorts by creation time: 16 hex ns + 6 hex process tag + 8 hex seq."""
    return _id_of(_time_ns())


class EnvelopeWire(BaseModel):
    """The envelope's schema, and its form on the wire and in the log (see the module)."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="Envelope")

    id: str = Field(description="Unique, time-ordered message id.")
    channel: str
    sender: str
    schema_name: str = Field(description="Name of the channel schema the payload obeys.")
    payload: dict[str, Any] = Field(description="The payload after schema validation.")
    ts: float = Field(description="Send time, seconds since the epoch.")
    reply_to: str | None = Field(default=None, description="Id of the message this answers.")
    correlation_id: str | None = None


FIELDS: tuple[str, ...] = tuple(EnvelopeWire.model_fields)
# only for its C field getters (what namedtuple attributes are): read a tuple slot by index
_Fields = namedtuple("_Fields", FIELDS)  # type: ignore[misc]
_tuple_new = tuple.__new__
_object_new = object.__new__
_ALL_FIELDS = frozenset(FIELDS)
# BaseModel's own slot setters: a validated envelope becomes the model without re-validation
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_tuple_iter = tuple.__iter__
_tuple_eq = tuple.__eq__


class Envelope(tuple):  # type: ignore[type-arg]
    """One message on one channel; immutable once sent (broadcast shares one instance).

    The fields, in this order: id, channel, sender, schema_name, payload, ts, reply_to,
    correlation_id (see ``EnvelopeWire`` for their meaning).
    """

    __slots__ = ()

    model_fields: ClassVar[dict[str, FieldInfo]] = EnvelopeWire.model_fields

    id: str = _Fields.id
    channel: str = _Fields.channel
    sender: str = _Fields.sender
    schema_name: str = _Fields.schema_name
    payload: dict[str, Any] = _Fields.payload
    ts: float = _Fields.ts
    reply_to: str | None = _Fields.reply_to
    correlation_id: str | None = _Fields.correlation_id

    def __new__(cls, **fields: Any) -> Envelope:
        """Validated from keyword fields, as the pydantic model would be."""
        return cls._of_wire(EnvelopeWire(**fields))

    @classmethod
    def _of_wire(cls, wire: EnvelopeWire) -> Envelope:
        d = wire.__dict__
        return _tuple_new(cls, [d[f] for f in FIELDS])

    @classmethod
    def trusted(
        cls,
        id: str,
        channel: str,
        sender: str,
        schema_name: str,
        payload: dict[str, Any],
        ts: float,
        reply_to: str | None = None,
        correlation_id: str | None = None,
    ) -> Envelope:
        """Build without validation: the hub made every field itself (the hot path).

        Only for values already known to have the declared types; everything coming from
        outside (JSON, the log) goes through ``model_validate``/``from_json``.
        """
        return _tuple_new(
            cls, (id, channel, sender, schema_name, payload, ts, reply_to, correlation_id)
        )

    @classmethod
    def fresh(
        cls,
        channel: str,
        sender: str,
        schema_name: str,
        payload: dict[str, Any],
        reply_to: str | None = None,
        correlation_id: str | None = None,
        id: str | None = None,
    ) -> Envelope:
        """A new trusted envelope (see :meth:`trusted`) sent now: its id (unless given)
        and its ``ts`` come from one clock reading, the hub's hot path."""
        ns = _time_ns()
        return _tuple_new(cls, (
            id or _id_of(ns), channel, sender, schema_name, payload, ns / 1e9, reply_to,
            correlation_id,
        ))

    # -- the model API, through the wire model -------------------------------------------

    def wire(self) -> EnvelopeWire:
        """This envelope as the pydantic model (no re-validation: it was validated)."""
        w = _object_new(EnvelopeWire)
        _set_dict(w, dict(zip(FIELDS, _tuple_iter(self), strict=True)))
        _set_fields(w, _ALL_FIELDS)
        _set_extra(w, None)
        _set_private(w, None)
        return w

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        return self.wire().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        if kwargs:
            return self.wire().model_dump_json(**kwargs)
        return self.to_json()

    def to_json(self) -> str:
        """The wire model's JSON (what ``model_dump_json`` gives), encoded by pydantic-core
        straight from the fields: every field is plain data, so it is the same text."""
        return _to_json(dict(zip(FIELDS, _tuple_iter(self), strict=True))).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Envelope:
        return cls._of_wire(EnvelopeWire.model_validate_json(text))

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Envelope:
        return cls.from_json(text)

    @classmethod
    def model_validate(cls, obj: Any) -> Envelope:
        if isinstance(obj, Envelope):
            return obj
        return cls._of_wire(EnvelopeWire.model_validate(obj))

    @classmethod
    def model_json_schema(cls, **kwargs: Any) -> dict[str, Any]:
        return EnvelopeWire.model_json_schema(**kwargs)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """As a model field: an Envelope passes, anything else is validated as the wire
        model; it dumps as the wire model does."""
        wire = handler.generate_schema(EnvelopeWire)
        return core_schema.union_schema(
            [
                core_schema.is_instance_schema(cls),
                core_schema.no_info_after_validator_function(cls._of_wire, wire),
            ],
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda env: env.wire(), return_schema=wire
            ),
        )

    # -- value semantics like the frozen model ----------------------------------------

    def __iter__(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        """(field, value) pairs, as a pydantic model iterates: ``dict(env)`` works."""
        return zip(FIELDS, _tuple_iter(self), strict=True)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):  # a plain tuple of the same values is no envelope
            return False if isinstance(other, tuple) else NotImplemented
        return _tuple_eq(self, other)

    def __ne__(self, other: object) -> bool:
        if type(other) is not type(self):
            return True if isinstance(other, tuple) else NotImplemented
        return not _tuple_eq(self, other)

    def __hash__(self) -> int:
        return hash(self[0])  # the id: equal envelopes share it

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(FIELDS, _tuple_iter(self), strict=True))
        return f"Envelope({inner})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild, tuple(_tuple_iter(self)))


def _rebuild(*fields: Any) -> Envelope:
    """Unpickling: the fields as they were (they were validated when first made)."""
    return _tuple_new(Envelope, fields)


__all__ = [
    "FIELDS",
    "Envelope",
    "EnvelopeWire",
    "new_message_id",
]
