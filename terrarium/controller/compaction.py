"""Summarizing compaction: the fold line written by a model, once per fold block.

When the conversation outgrows the context window the prompt folds its oldest turns into
one line (``terrarium.prompt.tail``). With ``compaction: fold`` that line is deterministic;
with ``compaction: summarize`` the creature's model (or a named sub-agent) writes it.

Why once per block, and cached: the fold point moves in blocks of ``FOLD_BLOCK`` turns, so
the same folded turns stay folded for several steps; asking again each step would cost a
model call per step and, worse, could word the line differently and void the model
server's prompt cache for everything after it. The summary is keyed by the folded turns
themselves, so every prompt with the same fold repeats it byte for byte. The line is
budgeted at ``max_tokens`` whatever its text (:class:`~terrarium.prompt.tail.FoldPolicy`),
so the stand-in line and the summary that replaces it fold at the same point.

A failed summary call is recorded (``FoldSummarized`` with ``ok=False``) and the
deterministic line stands in for that block, cached like a summary: the turn goes on and
the prompt stays stable. The summaries live as long as the controller: a creature restarted
by its supervisor asks once more for the block it has folded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from terrarium.config.models import CompactionConfig
from terrarium.events import Event, FoldSummarized
from terrarium.llm.base import ChatModel
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.prompt.budget import Tokenizer, truncate_to
from terrarium.prompt.tail import FOLD_BLOCK, FoldPolicy, Turn, fold_summary
from terrarium.tools.base import ToolContext
from terrarium.tools.delegate import STATE_SUBAGENTS

__all__ = ["SUMMARY_INSTRUCTION", "Compactor"]

SUMMARY_INSTRUCTION = (
    "Summarize the conversation below for your own later reference: the facts, decisions, "
    "open questions and what was asked of you. Plain prose, no preamble, at most {words} "
    "words."
)
_KEEP = 8  # summaries kept: the fold only grows, so only the newest few are ever asked for


class Compactor:
    """The fold lines of one creature under ``compaction: summarize``."""

    def __init__(self, creature: str, config: CompactionConfig, model: ChatModel,
                 tokenizer: Tokenizer, emit: Callable[[Event], None],
                 tool_ctx: ToolContext) -> None:
        self.creature = creature
        self.config = config
        self.model = model
        self.tokenizer = tokenizer
        self.emit = emit
        self.tool_ctx = tool_ctx  # its state holds the sub-agents, when the runtime has any
        self.lines: dict[tuple[Turn, ...], str] = {}  # folded turns → their fold line
        self.policy = FoldPolicy(line=self.line, reserve=config.max_tokens)

    def line(self, turns: Sequence[Turn]) -> str:
        """The fold line of ``turns``: its summary once there is one, else the stand-in."""
        return self.lines.get(tuple(turns)) or fold_summary(turns)

    def wants(self, turns: Sequence[Turn]) -> bool:
        """True if ``turns`` (a fold block's worth) still need their summary."""
        return bool(turns) and len(turns) % FOLD_BLOCK == 0 and tuple(turns) not in self.lines

    async def summarize(self, turns: Sequence[Turn]) -> str:
        """Ask for the summary of ``turns`` once, record it, and keep it (or the stand-in)."""
        key = tuple(turns)
        earlier, rest = self._earlier(key)
        text = "\n".join(t.line() for t in rest)
        if earlier:
            text = f"Summary of the conversation before this:\n{earlier}\n\n{text}"
        by = f"subagent:{self.config.subagent}" if self.config.subagent else "model"
        try:
            summary = " ".join((await self._ask(text)).split())
            if not summary:
                raise ValueError("the summary came back empty")
        except Exception as exc:  # any failure: the deterministic line, and the turn goes on
            line = fold_summary(key)
            error = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            self.emit(FoldSummarized(creature=self.creature, turns=len(key), by=by, ok=False,
                                     text=line, error=error))
        else:
            head = f"[earlier: {len(key)} turns, summarized] "
            line, _ = truncate_to(head + summary, self.config.max_tokens, self.tokenizer)
            self.emit(FoldSummarized(creature=self.creature, turns=len(key), by=by, ok=True,
                                     text=line))
        if len(self.lines) >= _KEEP:
            del self.lines[next(iter(self.lines))]
        self.lines[key] = line
        return line

    def _earlier(self, key: tuple[Turn, ...]) -> tuple[str, tuple[Turn, ...]]:
        """The longest earlier summary covering a head of ``key``, and the turns after it:
        a growing fold summarizes only its new block on top of the previous summary."""
        best: tuple[Turn, ...] = ()
        for done in self.lines:
            if len(best) < len(done) < len(key) and key[:len(done)] == done:
                best = done
        return (self.lines[best] if best else ""), key[len(best):]

    async def _ask(self, text: str) -> str:
        words = max(20, self.config.max_tokens * 2 // 3)
        instruction = SUMMARY_INSTRUCTION.format(words=words)
        name = self.config.subagent
        if name is not None:
            host: Any = self.tool_ctx.state.get(STATE_SUBAGENTS)
            if host is None:
                raise RuntimeError(f"the sub-agent {name} is not available in this run")
            return str(await host.delegate(name, f"{instruction}\n\n{text}", {}, self.tool_ctx))
        # no slot and no prompt cache: the creature's own slot keeps its conversation cached
        request = ChatRequest(
            messages=[ChatMessage(role="system", content=instruction),
                      ChatMessage(role="user", content=text)],
            max_tokens=self.config.max_tokens, cache_prompt=False)
        out: list[str] = []
        deltas = self.model.stream(request)
        try:
            async for delta in deltas:
                out.append(delta.text)
        finally:
            aclose = getattr(deltas, "aclose", None)
            if aclose is not None:
                await aclose()
        return "".join(out)
