"""The contract every call format keeps: render an example call, parse a stream of text.

One format definition drives the prompt's call-syntax examples, the streaming parser and
the grammar, so what the model is shown is exactly what is accepted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel


@dataclass(frozen=True, slots=True)
class CallSpec:
    """Something the model may call: a tool, or a typed send on a channel."""

    name: str
    description: str
    args_model: type[BaseModel]


@dataclass(frozen=True, slots=True)
class TextEvent:
    """Plain text, emitted as soon as it is known not to be part of a call."""

    text: str


@dataclass(frozen=True, slots=True)
class CallEvent:
    """A complete call. ``args`` is the validated model, or None with ``error`` set."""

    name: str
    raw_args: Mapping[str, Any]
    args: BaseModel | None = None
    error: str | None = None
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class NoticeEvent:
    """Something the model should be told (unknown call name, malformed call)."""

    text: str


ParseEvent = TextEvent | CallEvent | NoticeEvent


def coalesce(events: Iterable[ParseEvent]) -> list[ParseEvent]:
    """Merge adjacent TextEvents and drop empty ones.

    Parsers may cut plain text at any chunk boundary; after coalescing, every split of the
    same response yields exactly the same list of events (the split-invariance contract).
    """
    out: list[ParseEvent] = []
    for ev in events:
        if isinstance(ev, TextEvent):
            if not ev.text:
                continue
            if out and isinstance(out[-1], TextEvent):
                out[-1] = TextEvent(out[-1].text + ev.text)
                continue
        out.append(ev)
    return out


class StreamParser(ABC):
    """Fed arbitrary chunks; any split of the same text yields the same events."""

    @abstractmethod
    def feed(self, chunk: str) -> list[ParseEvent]: ...

    @abstractmethod
    def close(self) -> list[ParseEvent]: ...


@dataclass(slots=True)
class CallFormat(ABC):
    """A call syntax: ``bracket``, ``xml`` or ``native``."""

    name: ClassVar[str]
    textual: ClassVar[bool] = True  # False for native (calls travel as API tool_calls)
    specs: Mapping[str, CallSpec] = field(default_factory=dict)

    @abstractmethod
    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        """Text of one call exactly as the parser accepts it (used for prompt examples)."""

    @abstractmethod
    def new_parser(self) -> StreamParser: ...

    @abstractmethod
    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        """One paragraph teaching the syntax, with an example rendered by :meth:`render_call`.

        Generated rather than hand-written so the prompt can never show a call the parser
        would refuse.
        """

    def parse(self, text: str) -> list[ParseEvent]:
        """Parse a whole response at once (coalesced); handy for tests and replays."""
        parser = self.new_parser()
        return coalesce([*parser.feed(text), *parser.close()])


def send_call_name(channel: str) -> str:
    """The call a creature makes to send on ``channel``; its arguments are the schema's fields."""
    return f"send_{channel}"


def output_call_name(output: str) -> str:
    """The call that writes to a non-default named output (argument: ``text``)."""
    return f"output_{output}"


__all__ = [
    "CallEvent",
    "CallFormat",
    "CallSpec",
    "NoticeEvent",
    "ParseEvent",
    "StreamParser",
    "TextEvent",
    "coalesce",
    "output_call_name",
    "send_call_name",
]
