"""What a channel is and who may use it: specs, per-creature wiring, send results."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class SendResult:
    """What a send achieved: the envelope and the creatures whose inbox now holds it.

    A plain dataclass, not a schema: it is built once per send on the hot path.
    """

    envelope: Envelope
    delivered_to: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.delivered_to)


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
