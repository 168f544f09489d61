"""Typed events the runtime publishes for the TUI, the log and tests.

Plain frozen dataclasses rather than pydantic models: they are built on the hot path and
never parsed from outside; ``event_to_dict`` gives the JSON-ready form.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

CreatureStateName = Literal[
    "idle", "thinking", "calling_tool", "speaking", "restarting", "failed", "stopped"
]


EntryKind = Literal[
    "user", "message_in", "assistant", "tool_call", "tool_result", "notice", "output", "error"
]


@dataclass(slots=True)
class TranscriptEntry:
    """One line of a creature's transcript; ``detail`` holds collapsible extra text."""

    kind: EntryKind
    text: str
    ts: float
    turn: int = 0
    name: str | None = None  # tool or channel name
    detail: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event; ``kind`` names the type in logs and JSON."""

    kind: ClassVar[str] = "event"
    ts: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureState(Event):
    kind: ClassVar[str] = "creature_state"
    creature: str
    state: CreatureStateName


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageSent(Event):
    kind: ClassVar[str] = "message_sent"
    message_id: str
    channel: str
    sender: str
    delivered_to: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageDelivered(Event):
    kind: ClassVar[str] = "message_delivered"
    message_id: str
    channel: str
    receiver: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRefused(Event):
    kind: ClassVar[str] = "message_refused"
    sender: str
    channel: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(Event):
    kind: ClassVar[str] = "turn_started"
    creature: str
    turn_index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnded(Event):
    kind: ClassVar[str] = "turn_ended"
    creature: str
    turn_index: int
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(Event):
    kind: ClassVar[str] = "error"
    creature: str | None
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Restart(Event):
    kind: ClassVar[str] = "restart"
    creature: str
    attempt: int
    delay: float


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputText(Event):
    """A delta of text a creature wrote to one of its named outputs (streamed)."""

    kind: ClassVar[str] = "output_text"
    creature: str
    output: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptAppended(Event):
    """A line was added to a creature's transcript (by its controller or the runtime)."""

    kind: ClassVar[str] = "transcript"
    creature: str
    entry: TranscriptEntry


@dataclass(frozen=True, slots=True)
class PromptSectionInfo:
    """One section of a built prompt as a watcher sees it: no text, only its measures."""

    name: str
    zone: str
    bytes: int
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptBuilt(Event):
    """A creature's prompt was built for a model call (its section map, not its text)."""

    kind: ClassVar[str] = "prompt"
    creature: str
    prefix_hash: str
    tokens: int
    sections: tuple[PromptSectionInfo, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GenericEvent(Event):
    """Anything else worth showing; ``name`` says what, ``data`` is JSON-ready."""

    kind: ClassVar[str] = "generic"
    name: str
    creature: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Missed(Event):
    """Told to a subscriber whose buffer was full: ``count`` events were dropped for it."""

    kind: ClassVar[str] = "missed"
    count: int


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready form with the ``kind`` included (for the log's events table)."""
    data = dataclasses.asdict(event)
    data["kind"] = event.kind
    return data
