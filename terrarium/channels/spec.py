"""What a channel is and who may use it: specs, per-creature wiring, send results."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terrarium.channels.envelope import Envelope
from terrarium.errors import RegistryError, RuntimeFailure, closest_name

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


class ChannelMap:
    """A team's channels and who uses them, checked once: ``specs`` by name, ``wiring`` by
    creature, ``listeners`` by channel and ``observers`` ({creature: channels} it gets a
    copy of every message on without listening there).

    An observer is not a receiver: a queue message still goes to exactly one listener, the
    copy is not in the message's logged receivers (so a resumed run does not replay it),
    and a send never waits for an observer. When the observer's inbox is full the copy is
    dropped for it alone, counted in ``observer_missed`` and logged as a warning.
    """

    def __init__(self, channels: Iterable[ChannelSpec], creatures: Iterable[CreatureWiring],
                 observers: Mapping[str, Iterable[str]] | None = None) -> None:
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
        listeners: dict[str, list[str]] = {name: [] for name in self.specs}
        for w in self.wiring.values():
            for ch in w.listen:
                listeners[ch].append(w.name)
        self.listeners = {ch: tuple(names) for ch, names in listeners.items()}
        self.observers = self._check_observers(observers or {})

    def _check_observers(self, observers: Mapping[str, Iterable[str]]
                         ) -> dict[str, tuple[str, ...]]:
        out = {name: tuple(dict.fromkeys(chans)) for name, chans in observers.items()}
        out = {name: chans for name, chans in out.items() if chans}
        for name, chans in out.items():
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
        return out

    def targets(self, sender: str, channel: str) -> tuple[str, ...]:
        """Who a message from ``sender`` on ``channel`` is for (a broadcast never goes back
        to its sender)."""
        targets = self.listeners[channel]
        if self.specs[channel].kind == "broadcast":
            targets = tuple(t for t in targets if t != sender)
        return targets

    def watchers(self, sender: str, channel: str) -> tuple[str, ...]:
        """The observers of ``channel`` that get a copy of ``sender``'s messages there."""
        return tuple(o for o, chans in self.observers.items() if channel in chans and o != sender)

    def inbox_capacity(self, creature: str) -> int:
        """How many live envelopes ``creature``'s inbox holds: the sum of its channels'
        capacities (0: it hears no channel, so it has no inbox)."""
        w = self.wiring[creature]
        heard = set(w.listen) | set(self.observers.get(creature, ()))
        return sum(self.specs[ch].capacity for ch in heard)

    def route_problem(self, sender: str, channel: str) -> str:
        """Why ``sender`` may not send on ``channel``, in one sentence."""
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

    def no_listener(self, sender: str, channel: str) -> str:
        """Why a send from ``sender`` on ``channel`` would reach nobody, in one sentence."""
        if self.listeners[channel]:
            return (
                f"Channel {channel!r} has no listener other than {sender!r} itself, "
                "so nobody would receive the message."
            )
        return f"Channel {channel!r} has no listener, so nobody would receive the message."


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
    "ChannelMap",
    "ChannelSpec",
    "CreatureWiring",
    "SendResult",
    "wiring_from_mapping",
]
