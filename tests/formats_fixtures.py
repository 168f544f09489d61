"""Call specs and helpers shared by the text-format parser tests (bracket and xml)."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from terrarium.formats import CallEvent, CallFormat, CallSpec, ParseEvent, coalesce


class Send(BaseModel):
    model_config = ConfigDict(extra="forbid")
    channel: str = Field(description="where to send")
    text: str = Field(description="what to say")


class Mode(enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Configure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flag: bool
    count: int = 0
    ratio: float = 1.0
    mode: Mode = Mode.FAST
    level: Literal["low", "high"] = "low"
    tags: list[str] = []
    extra: dict[str, int] = {}
    note: str | None = None
    limit: int | None = 5


class Nothing(BaseModel):
    model_config = ConfigDict(extra="forbid")


SPECS = [
    CallSpec("send_message", "Send a message.", Send),
    CallSpec("configure", "Change settings.", Configure),
    CallSpec("info", "Show docs.", Nothing),
    CallSpec("send", "A name that is a prefix of another.", Send),
]


def feed_split(fmt: CallFormat, text: str, cuts: list[int]) -> list[ParseEvent]:
    """Parse ``text`` fed in pieces cut at ``cuts``; the events coalesced."""
    parser = fmt.new_parser()
    events: list[ParseEvent] = []
    last = 0
    for cut in [*cuts, len(text)]:
        events += parser.feed(text[last:cut])
        last = cut
    events += parser.close()
    return coalesce(events)


def only_call(events: list[ParseEvent]) -> CallEvent:
    calls = [e for e in events if isinstance(e, CallEvent)]
    assert len(calls) == 1, events
    return calls[0]


def assert_every_two_way_split_agrees(fmt: CallFormat, text: str) -> None:
    """Cut once at every position: the events equal those of the whole text."""
    whole = fmt.parse(text)
    for i in range(len(text) + 1):
        assert feed_split(fmt, text, [i]) == whole, i


def assert_char_and_three_way_splits_agree(fmt: CallFormat, text: str) -> None:
    """Char by char, and cut twice at a grid of positions: the events never change."""
    whole = fmt.parse(text)
    assert feed_split(fmt, text, list(range(1, len(text)))) == whole
    step = max(1, len(text) // 9)
    for i in range(0, len(text) + 1, step):
        for j in range(i, len(text) + 1, step):
            assert feed_split(fmt, text, [i, j]) == whole, (i, j)
