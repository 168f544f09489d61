"""BuiltPrompt: one step's prompt, as a system message plus tail, with its section map.

For chat APIs the prefix is the system message, then the conversation turns, then ONE
context message carrying the other tail sections (loaded skills, memory, recalled facts,
status, notice). That message goes after the history on purpose: the system message and the
older turns are then byte-identical from one step to the next, so a llama.cpp slot (or a
hosted prompt cache) reuses everything up to the newest turn, and only the small volatile
block is re-read. Putting memory before the history would invalidate the whole history's
cache every time memory changed.
"""

from __future__ import annotations

import hashlib
import json as _json
from dataclasses import dataclass
from typing import Any, Literal

from terrarium.prompt.budget import Tokenizer
from terrarium.prompt.tail import Tail

__all__ = ["BuiltPrompt", "Prefix", "SectionInfo", "Zone", "finish_prefix", "join_sections"]

Zone = Literal["prefix", "tail"]


@dataclass(frozen=True, slots=True)
class SectionInfo:
    """One entry of the section map: where a section lives and what it costs."""

    name: str
    zone: Zone
    bytes: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Prefix:
    """The kept prefix sections joined, hashed and counted (what a ``PromptCache`` memoizes)."""

    text: str
    sha256: str
    sections: tuple[SectionInfo, ...]
    tokens: int


def join_sections(parts: list[str]) -> str:
    """Blank line between sections; a section's own trailing newline is kept verbatim."""
    out: list[str] = []
    for i, text in enumerate(parts):
        out.append(text)
        if i + 1 < len(parts):
            out.append("\n" if text.endswith("\n") else "\n\n")
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


def finish_prefix(kept: tuple[tuple[str, str], ...], tokenizer: Tokenizer) -> Prefix:
    """Join, hash and count the kept (name, text) sections."""
    text = join_sections([t for _, t in kept])
    count = tokenizer.count
    sections = tuple(
        SectionInfo(name, "prefix", len(t.encode("utf-8")), count(t)) for name, t in kept
    )
    # Section counts plus two per blank-line separator: for the estimate this is never below
    # counting the whole, and it avoids counting the 10+ KB prefix a second time.
    tokens = sum(info.tokens for info in sections) + 2 * (len(sections) - 1)
    return Prefix(text, hashlib.sha256(text.encode("utf-8")).hexdigest(), sections, tokens)


def _boundary(info: SectionInfo) -> str:
    return f"───── {info.name} · {info.zone} · {info.bytes} B · {info.tokens} tok ─────"


class BuiltPrompt:
    """The prompt for one step; cheap to create, derived views computed on demand."""

    __slots__ = (
        "_tail",
        "creature",
        "prefix",
        "prefix_hash",
        "prefix_sections",
        "prefix_texts",
        "prefix_tokens",
        "step",
    )

    def __init__(
        self,
        *,
        creature: str,
        step: int,
        prefix: str,
        prefix_hash: str,
        prefix_sections: tuple[SectionInfo, ...],
        prefix_texts: dict[str, str],
        prefix_tokens: int,
        tail: Tail,
    ) -> None:
        self.creature = creature
        self.step = step
        self.prefix = prefix
        self.prefix_hash = prefix_hash
        self.prefix_sections = prefix_sections
        self.prefix_texts = prefix_texts  # shared with the builder; treat as read-only
        self.prefix_tokens = prefix_tokens
        self._tail = tail

    @property
    def tail_sections(self) -> dict[str, str]:
        """Tail section texts, in tail order (least to most mutable)."""
        return dict(self._tail.texts)

    @property
    def truncated(self) -> tuple[str, ...]:
        """Tail sections that were cut to their cap (``conversation`` when turns folded)."""
        return self._tail.truncated

    @property
    def folded_turns(self) -> int:
        """How many of the oldest turns were folded into the summary line."""
        return self._tail.folded

    @property
    def sections(self) -> tuple[SectionInfo, ...]:
        """The section map: prefix sections then tail sections, with bytes and tokens."""
        return self.prefix_sections + self.tail_section_infos()

    def tail_section_infos(self) -> tuple[SectionInfo, ...]:
        """The tail's part of the section map (``sections`` after ``prefix_sections``)."""
        tokens = self._tail.tokens
        return tuple(SectionInfo(name, "tail", len(text.encode("utf-8")), tokens[name])
                     for name, text in self._tail.texts.items())

    @property
    def tokens(self) -> int:
        """Estimated tokens of the whole prompt (prefix plus every tail section)."""
        return self.prefix_tokens + sum(self._tail.tokens.values())

    def text(self) -> str:
        """The whole prompt as one string (for completion APIs): prefix then tail sections."""
        if not self._tail.texts:
            return self.prefix
        return self.prefix + "\n" + "\n\n".join(self._tail.texts.values()) + "\n"

    def context_message(self) -> str:
        """The non-conversation tail sections as one block ("" when there are none)."""
        return "\n\n".join(
            text for name, text in self._tail.texts.items() if name != "conversation"
        )

    def messages(self) -> list[dict[str, str]]:
        """Chat messages: system prefix, (fold summary), turns, with the context block placed
        just before the newest user message.

        Cache: the prefix and all earlier turns stay byte-identical from step to step; only
        the context block and the newest message are evaluated again. Small models answer
        far better when the user's words come last rather than a block of status text.
        """
        out = [{"role": "system", "content": self.prefix}]
        if self._tail.summary:
            out.append({"role": "system", "content": self._tail.summary})
        turns = [t.message() for t in self._tail.turns]
        ctx = self.context_message()
        if ctx:
            last_user = max((i for i, t in enumerate(turns) if t["role"] == "user"),
                            default=len(turns))
            turns.insert(last_user, {"role": "system", "content": ctx})
        return out + turns

    def render_text(self) -> str:
        """The full prompt with a visible boundary line before each section."""
        texts = {**self.prefix_texts, **self._tail.texts}
        chunks = []
        for info in self.sections:
            chunks.append(_boundary(info))
            chunks.append(texts[info.name].rstrip("\n"))
        return "\n".join(chunks) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "creature": self.creature,
            "step": self.step,
            "prefix_hash": self.prefix_hash,
            "tokens": self.tokens,
            "truncated": list(self.truncated),
            "folded_turns": self.folded_turns,
            "sections": [
                {"name": s.name, "zone": s.zone, "bytes": s.bytes, "tokens": s.tokens}
                for s in self.sections
            ],
            "prefix": self.prefix,
            "tail": dict(self._tail.texts),
            "messages": self.messages(),
        }

    def to_json(self) -> str:
        """Stable JSON (fixed key order, UTF-8 kept readable) for ``terrarium prompt --json``."""
        return _json.dumps(self.to_dict(), ensure_ascii=False, indent=2)
