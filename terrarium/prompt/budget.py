"""Token counting and per-section caps for the prompt's variable tail.

Exact counts come from the backend's tokenizer when one is available
(:class:`terrarium.llm.tokenizer.LlamaTokenizer` asks a llama.cpp server's ``/tokenize``; it
satisfies :class:`Tokenizer`); otherwise :class:`EstimateTokenizer` gives a cheap, documented
estimate that errs on the high side, so budgets computed with it leave room rather than
overflow.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

TRUNCATED_MARKER = "[truncated]"


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that can count the tokens of a text for the model in use."""

    def count(self, text: str) -> int: ...


class EstimateTokenizer:
    """Estimate: ``max(ceil(utf8_bytes / 4), separators + 1)`` for non-empty text.

    BPE vocabularies average about four bytes of English prose per token, so the byte term
    tracks prose; text made of many short words or symbols has at least one token per word,
    which the separator term (spaces + newlines + 1) catches. Both terms are O(n) C-level
    string operations, so counting a 20 KB prefix costs microseconds.
    """

    def count(self, text: str) -> int:
        if not text:
            return 0
        n = len(text) if text.isascii() else len(text.encode("utf-8"))
        by_bytes = (n + 3) // 4
        words = text.count(" ") + text.count("\n") + 1
        return by_bytes if by_bytes > words else words


DEFAULT_TOKENIZER = EstimateTokenizer()


class TailBudgets(BaseModel):
    """Token caps for the tail sections; the conversation takes what the window leaves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    loaded_skills: int = Field(2048, ge=0, description="cap for loaded skill bodies")
    memory: int = Field(1024, ge=0, description="cap for the memory block")
    recalled: int = Field(1024, ge=0, description="cap for recalled facts")
    status: int = Field(64, ge=0, description="cap for the step/date line")
    notice: int = Field(512, ge=0, description="cap for the one-shot notice")
    conversation: int | None = Field(
        None, ge=0, description="hard cap for the conversation; None: follow the window"
    )
    reply_reserve: int = Field(512, ge=0, description="tokens kept free for the reply")
    margin: int = Field(64, ge=0, description="slack for tokenizer disagreement")
    turn_overhead: int = Field(4, ge=0, description="tokens a chat template adds per turn")


def truncate_to(text: str, cap: int, tokenizer: Tokenizer) -> tuple[str, bool]:
    """Cut ``text`` (keeping its head) so it fits ``cap`` tokens including the marker."""
    n = tokenizer.count(text)
    if n <= cap:
        return text, False
    marker = "\n" + TRUNCATED_MARKER
    if tokenizer.count(TRUNCATED_MARKER) > cap:
        return "", True
    keep = len(text) * cap // max(n, 1)
    while keep > 0:
        candidate = text[:keep].rstrip() + marker
        if tokenizer.count(candidate) <= cap:
            return candidate, True
        keep = keep * 9 // 10
    return TRUNCATED_MARKER, True


__all__ = [
    "DEFAULT_TOKENIZER",
    "TRUNCATED_MARKER",
    "EstimateTokenizer",
    "TailBudgets",
    "Tokenizer",
    "truncate_to",
]
