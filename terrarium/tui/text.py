"""Plain-text renderings the monitor shows: topology, payload previews, status cells, prompts.

Kept free of Textual so they can be tested directly and reused by other front ends; every
list is sorted so the screen never depends on set or dict iteration order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from terrarium.config import Team
from terrarium.controller.loop import INCOMING_HEADER
from terrarium.events import PromptBuilt, TranscriptEntry
from terrarium.runtime.api import CreatureStatus

STATE_LABELS: dict[str, str] = {
    "idle": "idle",
    "thinking": "thinking",
    "calling_tool": "calling tool",
    "speaking": "speaking",
    "restarting": "restarting",
    "failed": "failed",
    "stopped": "stopped",
}

STATE_STYLES: dict[str, str] = {
    "idle": "dim",
    "thinking": "bold yellow",
    "calling_tool": "bold magenta",
    "speaking": "bold green",
    "restarting": "bold reverse yellow",
    "failed": "bold reverse red",
    "stopped": "dim italic",
}

# how sub-agent runs and background jobs ended (or that they still run)
WORK_STYLES: dict[str, str] = {
    "running": "bold cyan",
    "done": "green",
    "failed": "bold red",
    "cancelled": "dim italic",
    "lost": "bold reverse yellow",
}


def one_line(text: str, width: int) -> str:
    """Collapse whitespace and cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    if width <= 0:
        return ""
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def payload_preview(payload: Mapping[str, Any] | None, width: int = 60) -> str:
    """``key=value`` pairs in key order on one line (a single ``text`` field shows bare)."""
    if payload is None:
        return ""
    if list(payload) == ["text"] and isinstance(payload["text"], str):
        return one_line(payload["text"], width)
    parts = []
    for key in sorted(payload):
        value = payload[key]
        shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        parts.append(f"{key}={shown}")
    return one_line(" ".join(parts), width)


def model_label(team: Team, creature: str) -> str:
    """What a creature runs on, from its config (provider, plus model name when given)."""
    cdef = team.creatures.get(creature)
    controller = getattr(cdef.config, "controller", None) if cdef is not None else None
    if controller is None:
        return "embedded"
    if controller.provider == "scripted":
        return "scripted"
    return f"{controller.provider}:{controller.model}" if controller.model else controller.provider


def ratio_text(status: CreatureStatus) -> str:
    return f"{status.cached_ratio * 100:.0f}%" if status.tokens_in else "-"


def status_cells(status: CreatureStatus) -> tuple[str, str, str, str, str, str, str]:
    """The team table's cells for one creature, in column order."""
    state = STATE_LABELS.get(status.state, status.state)
    if status.restarts:
        state += f" ↻{status.restarts}"
    return (
        status.name,
        state,
        status.model,
        str(status.turns),
        str(status.tokens_in),
        str(status.tokens_out),
        ratio_text(status),
    )


def topology_text(team: Team) -> str:
    """Who listens and who sends, per channel and per creature, as a readable text graph."""
    lines = [f"team {team.name}"]
    if team.input_channel:
        lines.append(f"user ──▶ {team.input_channel}  (input channel; entry: {team.entry})")
    lines.append("")
    lines.append("channels")
    if not team.channels:
        lines.append("  (none)")
    for name in sorted(team.channels):
        ch = team.channels[name]
        schema = ch.message_type.name if ch.message_type is not None else "any"
        senders = ", ".join(sorted(ch.senders)) or "nobody"
        listeners = ", ".join(sorted(ch.listeners)) or "nobody"
        lines.append(f"  {senders} ──▶ [{name}] ──▶ {listeners}")
        about = f": {ch.description}" if ch.description else ""
        lines.append(f"      {ch.type}, schema {schema}{about}")
        if ch.message_type is not None:
            for f in ch.message_type.fields:
                req = "" if f.required else " (optional)"
                lines.append(f"        · {f.name}: {f.type_label}{req}")
    lines.append("")
    lines.append("creatures")
    for name in sorted(team.creatures):
        c = team.creatures[name]
        lines.append(f"  {name}  ({model_label(team, name)})")
        lines.append(f"      listens: {', '.join(sorted(c.listen)) or '-'}")
        lines.append(f"      sends:   {', '.join(sorted(c.can_send)) or '-'}")
        if c.output_wiring:
            lines.append(f"      output → {', '.join(sorted(c.output_wiring))}")
    return "\n".join(lines)



ENTRY_MARKS: dict[str, str] = {
    "user": "user ▸",
    "message_in": "in ◂",
    "assistant": "says",
    "tool_call": "call",
    "tool_result": "result",
    "notice": "note",
    "output": "out ▸",
    "error": "ERROR",
    "reasoning": "thinks",
}


def _entry_parts(entry: TranscriptEntry) -> tuple[str, str]:
    """The head (``#turn mark name``) and the text worth showing for one entry."""
    mark = ENTRY_MARKS.get(entry.kind, entry.kind)
    name = f" {entry.name}" if entry.name else ""
    text = entry.text
    if entry.kind == "tool_call" and entry.detail:
        text = entry.detail  # the arguments say more than the repeated name
    if entry.kind == "message_in":
        header = INCOMING_HEADER.match(text)
        text = INCOMING_HEADER.sub("", text, count=1)  # the framing the model sees
        sender = entry.data.get("sender") or (header.group(2) if header else None)
        if isinstance(sender, str):
            name += f" from {sender}"
    return f"#{entry.turn} {mark}{name}: ", text


def entry_title(entry: TranscriptEntry, width: int = 70) -> str:
    """One line naming a transcript entry: turn, kind, the tool/channel and the text."""
    head, text = _entry_parts(entry)
    return head + one_line(text, max(width - len(head), 10))


def entry_full(entry: TranscriptEntry) -> str:
    """The whole entry (head and untruncated text), for wrapping on screen."""
    head, text = _entry_parts(entry)
    return head + text.strip()


@dataclass(frozen=True, slots=True)
class SectionView:
    name: str
    zone: str
    bytes: int
    tokens: int


@dataclass(frozen=True, slots=True)
class PromptView:
    """What the prompt inspector shows; built from a BuiltPrompt or from a logged event."""

    creature: str
    step: int
    prefix_hash: str
    sections: tuple[SectionView, ...]
    texts: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_built(cls, built: Any) -> PromptView:
        sections = tuple(SectionView(s.name, s.zone, s.bytes, s.tokens) for s in built.sections)
        texts = {**built.prefix_texts, **built.tail_sections}
        return cls(built.creature, built.step, built.prefix_hash, sections, texts)

    @classmethod
    def from_event(cls, event: PromptBuilt) -> PromptView:
        """From a logged prompt event: its section map (the log keeps no prompt text)."""
        sections = tuple(SectionView(s.name, s.zone, s.bytes, s.tokens) for s in event.sections)
        return cls(event.creature, 0, event.prefix_hash, sections)

    @property
    def prefix_bytes(self) -> int:
        return sum(s.bytes for s in self.sections if s.zone == "prefix")

    @property
    def tail_bytes(self) -> int:
        return sum(s.bytes for s in self.sections if s.zone == "tail")

    def summary(self) -> str:
        """Header plus the section map: one row per section with zone, bytes, tokens."""
        pre = [s for s in self.sections if s.zone == "prefix"]
        tail = [s for s in self.sections if s.zone != "prefix"]
        lines = [
            f"prompt of {self.creature} · step {self.step} · prefix hash {self.prefix_hash}",
            f"prefix {self.prefix_bytes} B / {sum(s.tokens for s in pre)} tok · "
            f"tail {self.tail_bytes} B / {sum(s.tokens for s in tail)} tok",
            f"{'section':<22} {'zone':<6} {'bytes':>7} {'tokens':>7}",
        ]
        for s in self.sections:
            lines.append(f"{s.name:<22} {s.zone:<6} {s.bytes:>7} {s.tokens:>7}")
        return "\n".join(lines)

    def body(self) -> str:
        """The assembled prompt with a boundary line before each section."""
        chunks: list[str] = []
        for s in self.sections:
            chunks.append(f"───── {s.name} · {s.zone} · {s.bytes} B · {s.tokens} tok ─────")
            text = self.texts.get(s.name)
            chunks.append(text.rstrip("\n") if text is not None else "(text not recorded)")
        return "\n".join(chunks)


def transcript_plain(entries: Sequence[TranscriptEntry], width: int = 70) -> str:
    """A transcript as plain lines (for logs and tests)."""
    return "\n".join(entry_title(e, width) for e in entries)


__all__ = [
    "ENTRY_MARKS",
    "STATE_LABELS",
    "STATE_STYLES",
    "WORK_STYLES",
    "PromptView",
    "SectionView",
    "entry_full",
    "entry_title",
    "model_label",
    "one_line",
    "payload_preview",
    "ratio_text",
    "status_cells",
    "topology_text",
    "transcript_plain",
]
