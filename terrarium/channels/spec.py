"""What a channel is and who may use it: specs, per-creature wiring, send results."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terrarium.channels.envelope import Envelope

ChannelKind = Literal["queue", "broadcast"]

DEFAULT_CAPACITY = 64
DEFAULT_MAX_BYTES = 64 * 1024


class ChannelSpec(BaseModel):
    """A named, typed conduit. ``validator`` is the pydantic model compiled from its schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    name: str
    kind: ChannelKind = "queue"
    description: str = ""
    schema_name: str = ""
    validator: type[BaseModel] | None = None
    capacity: int = Field(default=DEFAULT_CAPACITY, ge=1, description="Buffer per receiver.")
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES, ge=1, description="Largest payload, as UTF-8 JSON bytes."
    )

    @field_validator("name")
    @classmethod
    def _name_not_empty(cls, v: str) -> str:
        if not v:
            raise ValueError("a channel needs a non-empty name")
        return v


class CreatureWiring(BaseModel):
    """Which channels one creature listens to and may send on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    listen: tuple[str, ...] = ()
    can_send: tuple[str, ...] = ()


_Result = namedtuple("_Result", ("envelope", "delivered_to"))  # only for its field getters


class SendResult(tuple):  # type: ignore[type-arg]
    """What a send achieved: the envelope and the creatures whose inbox now holds it.

    An immutable pair, not a schema: it is built once per send on the hot path, where a
    frozen dataclass cost several C calls more (the hub makes it with one:
    ``tuple.__new__(SendResult, (env, delivered))``). ``SendResult(envelope,
    delivered_to)``; equal only to an equal ``SendResult``.
    """

    __slots__ = ()

    envelope: Envelope = _Result.envelope
    delivered_to: tuple[str, ...] = _Result.delivered_to

    def __new__(cls, envelope: Envelope, delivered_to: tuple[str, ...]) -> SendResult:
        return _tuple_new(cls, (envelope, delivered_to))

    @property
    def count(self) -> int:  # type: ignore[override]  # tuple.count is not meant here
        return len(self[1])

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return False if isinstance(other, tuple) else NotImplemented
        return _tuple_eq(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"SendResult(envelope={self[0]!r}, delivered_to={self[1]!r})"


_tuple_new = tuple.__new__
_tuple_eq = tuple.__eq__


def wiring_from_mapping(
    mapping: dict[str, tuple[Iterable[str], Iterable[str]]],
) -> list[CreatureWiring]:
    """Convenience: ``{creature: (listen, can_send)}`` → wiring list (tests, benchmarks)."""
    return [
        CreatureWiring(name=n, listen=tuple(listen), can_send=tuple(send))
        for n, (listen, send) in mapping.items()
    ]


__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_MAX_BYTES",
    "ChannelKind",
    "ChannelSpec",
    "CreatureWiring",
    "SendResult",
    "wiring_from_mapping",
]
