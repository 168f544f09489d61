"""The monitor's own view of a run, folded from bus events (no Textual here).

The runtime owns statuses and transcripts; what only the event stream tells is channel
traffic (sends and refusals, in order), streamed output not yet in a transcript, sub-agent
runs and background jobs (``work``, see ``delegation.py``), and how many events the bus had
to drop for us. Everything is bounded so a long run cannot grow
the monitor without limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from terrarium.config import Team
from terrarium.events import (
    CreatureState,
    Event,
    MessageRefused,
    MessageSent,
    Missed,
    OutputText,
    PromptBuilt,
    Reasoning,
    Restart,
    TranscriptAppended,
    TurnEnded,
    TurnStarted,
)
from terrarium.tui.delegation import Delegations

MAX_TRAFFIC = 500
MAX_STREAM_CHARS = 4000

PayloadLookup = Callable[[str], "tuple[str, dict[str, Any]] | None"]


@dataclass(slots=True)
class TrafficRow:
    """One send or refusal as the channel panel shows it."""

    seq: int
    ts: float
    channel: str
    sender: str
    receivers: tuple[str, ...]
    schema: str
    message_id: str | None = None
    payload: dict[str, Any] | None = None
    refused: str | None = None  # the reason, for a refusal

    def involves(self, name: str) -> bool:
        """True when ``name`` is this row's channel, sender or one of its receivers."""
        return name in (self.channel, self.sender) or name in self.receivers


@dataclass(slots=True)
class Changes:
    """What one batch of events touched, so the app redraws only that."""

    creatures: set[str] = field(default_factory=set)
    transcripts: set[str] = field(default_factory=set)
    prompts: set[str] = field(default_factory=set)
    work: set[str] = field(default_factory=set)  # creatures whose sub-agents or jobs moved
    traffic: bool = False
    missed: int = 0

    def merge(self, other: Changes) -> None:
        self.creatures |= other.creatures
        self.transcripts |= other.transcripts
        self.prompts |= other.prompts
        self.work |= other.work
        self.traffic = self.traffic or other.traffic
        self.missed += other.missed

    def __bool__(self) -> bool:
        return bool(self.creatures or self.transcripts or self.prompts or self.work
                    or self.traffic or self.missed)


class MonitorState:
    """Folds events into traffic rows and live output; reports what changed."""

    def __init__(self, team: Team, *, max_traffic: int = MAX_TRAFFIC) -> None:
        self.team = team
        self.traffic: deque[TrafficRow] = deque(maxlen=max_traffic)
        self.streaming: dict[str, str] = {}  # creature -> output text since its last entry
        self.work = Delegations()  # sub-agent runs and background jobs
        self.missed = 0
        self.events_seen = 0
        self._seq = 0

    def schema_of(self, channel: str) -> str:
        ch = self.team.channels.get(channel)
        if ch is None or ch.message_type is None:
            return "-"
        return ch.message_type.name

    def apply(self, event: Event) -> Changes:
        """Fold one event; return what the screen must redraw."""
        ch = Changes()
        self.events_seen += 1
        ch.work = self.work.apply(event)
        if isinstance(event, MessageSent):
            self._seq += 1
            self.traffic.append(
                TrafficRow(self._seq, event.ts, event.channel, event.sender,
                           tuple(event.delivered_to), self.schema_of(event.channel),
                           message_id=event.message_id)
            )
            ch.traffic = True
        elif isinstance(event, MessageRefused):
            self._seq += 1
            self.traffic.append(
                TrafficRow(self._seq, event.ts, event.channel, event.sender, (),
                           self.schema_of(event.channel), refused=event.reason)
            )
            ch.traffic = True
        elif isinstance(event, OutputText):
            text = self.streaming.get(event.creature, "") + event.text
            self.streaming[event.creature] = text[-MAX_STREAM_CHARS:]
            ch.transcripts.add(event.creature)
        elif isinstance(event, Reasoning):  # thinking streams in the view, marked as such
            text = self.streaming.get(event.creature, "") or "(thinking) "
            self.streaming[event.creature] = (text + event.text)[-MAX_STREAM_CHARS:]
            ch.transcripts.add(event.creature)
        elif isinstance(event, TranscriptAppended):
            self.streaming.pop(event.creature, None)
            ch.transcripts.add(event.creature)
        elif isinstance(event, PromptBuilt):
            ch.prompts.add(event.creature)
        elif isinstance(event, CreatureState | TurnStarted | TurnEnded | Restart):
            ch.creatures.add(event.creature)
        elif isinstance(event, Missed):
            self.missed += event.count
            ch.missed = event.count
            ch.creatures |= set(self.team.creatures)  # anything may have changed
            ch.transcripts |= set(self.team.creatures)
            ch.work |= set(self.team.creatures)
        return ch

    def apply_all(self, events: Iterable[Event]) -> Changes:
        total = Changes()
        for e in events:
            total.merge(self.apply(e))
        return total

    def fill_payloads(self, lookup: PayloadLookup) -> None:
        """Attach payloads to sends that lack one (the log has them; events do not)."""
        for row in self.traffic:
            if row.payload is None and row.message_id and row.refused is None:
                found = lookup(row.message_id)
                if found is not None:
                    schema, payload = found
                    row.payload = payload
                    if row.schema == "-" and schema:
                        row.schema = schema

    def rows(self, filt: str = "") -> list[TrafficRow]:
        """Traffic in arrival order, keeping rows that involve ``filt`` (all when empty)."""
        f = filt.strip()
        if not f:
            return list(self.traffic)
        return [r for r in self.traffic if r.involves(f)]


def set_payloads(state: MonitorState, payloads: Mapping[str, dict[str, Any]]) -> None:
    """Attach known payloads by message id (replay has them all up front)."""
    state.fill_payloads(lambda mid: ("", payloads[mid]) if mid in payloads else None)


__all__ = [
    "MAX_STREAM_CHARS",
    "MAX_TRAFFIC",
    "Changes",
    "MonitorState",
    "PayloadLookup",
    "TrafficRow",
    "set_payloads",
]
