"""The variable tail: what changes from step to step, ordered from least to most mutable.

Loaded skill bodies change rarely, memory now and then, recalled facts per query, the
conversation every turn, the one-shot notice when a round had one. The status line holds
only what a creature asks for (:class:`StatusSpec`): by default the date, which changes once
a day; a step counter or a timestamp by the minute would change every step.
Each section has a token cap; the conversation gets what the context window leaves and folds
its oldest turns into one summary line before anything fails: by default a deterministic
line (:func:`fold_summary`); a :class:`FoldPolicy` may supply another (the controller's
model-written summaries, ``compaction: summarize``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terrarium.errors import ContextOverflow, PromptError
from terrarium.prompt.budget import TailBudgets, Tokenizer, truncate_to
from terrarium.prompt.inputs import Skill

__all__ = [
    "FOLD_BLOCK",
    "TAIL_ORDER",
    "DateGrain",
    "FoldPolicy",
    "StatusSpec",
    "Tail",
    "TailAssembler",
    "TailState",
    "Turn",
    "fold_summary",
    "status_text",
]

Role = Literal["system", "user", "assistant", "tool"]
DateGrain = Literal["off", "day", "minute", "second"]
TAIL_ORDER: tuple[str, ...] = (
    "loaded_skills",
    "memory",
    "recalled",
    "conversation",
    "status",
    "notice",
)


class StatusSpec(BaseModel):
    """What the status block holds (config ``prompt_status: {date: ..., step: ...}``).

    Everything in it is re-sent when it changes, so the default holds only what changes
    rarely: the date (``day``). ``minute``/``second`` and ``step`` change on every step and
    cost their tokens each time; a creature that needs them asks for them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: DateGrain = Field(
        "day", description="The date shown: day (YYYY-MM-DD, the default), minute, second "
        "(full timestamps, new on every step) or off."
    )
    step: bool = Field(False, description="Show the step counter (new on every step).")

    @field_validator("date", mode="before")
    @classmethod
    def _yaml_off(cls, v: object) -> object:
        return "off" if v is False else v  # YAML reads a bare `off` as false


DEFAULT_STATUS = StatusSpec()


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation message as the chat API sees it."""

    role: Role
    content: str
    name: str | None = None
    tool_call_id: str | None = None

    def message(self) -> dict[str, str]:
        msg = {"role": self.role, "content": self.content}
        if self.name is not None:
            msg["name"] = self.name
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg

    def line(self) -> str:
        who = self.role if self.name is None else f"{self.role} {self.name}"
        return f"[{who}] {self.content}"


@dataclass(frozen=True, slots=True)
class TailState:
    """Per-step input to :meth:`PromptBuilder.build`."""

    step: int
    now: datetime | None = None
    loaded_skills: Sequence[str] = ()
    memory: str = ""
    recalled: Sequence[str] = ()
    conversation: Sequence[Turn] = ()
    notice: str | None = None
    status: bool | StatusSpec = True  # True: the default StatusSpec; False: no status block
    fold: FoldPolicy | None = None  # how folded turns become the fold line (None: fold_summary)


@dataclass(slots=True)
class Tail:
    """The assembled tail: section texts, conversation messages, token counts, flags."""

    texts: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    turns: tuple[Turn, ...] = ()
    folded: int = 0
    summary: str = ""
    truncated: tuple[str, ...] = ()


FOLD_BLOCK = 8
"""Old turns fold this many at a time (see ``TailAssembler._fit``)."""


def fold_summary(turns: Sequence[Turn]) -> str:
    """One deterministic line standing in for ``turns`` (counts by role, first user ask)."""
    counts: dict[str, int] = {}
    return _fold_text(len(turns), counts, _fold_count(turns, counts, ""))


def _fold_count(turns: Sequence[Turn], counts: dict[str, int], first_user: str) -> str:
    """Add ``turns`` to ``counts`` (by role); the first user ask, if not ``first_user``."""
    for t in turns:
        counts[t.role] = counts.get(t.role, 0) + 1
        if not first_user and t.role == "user":
            first_user = " ".join(t.content.split())
    return first_user


def _fold_text(n: int, counts: dict[str, int], first_user: str) -> str:
    by_role = ", ".join(
        f"{counts[r]} {r}" for r in ("user", "assistant", "tool", "system") if r in counts
    )
    text = f"[earlier: {n} turn{'s' if n != 1 else ''} folded ({by_role})"
    if first_user:
        ask = first_user if len(first_user) <= 80 else first_user[:79] + "…"
        text += f"; the user first asked: {ask!r}"
    return text + "]"


@dataclass(frozen=True, slots=True)
class FoldPolicy:
    """How the folded turns become the fold line, and what that line is budgeted at.

    ``reserve``: the line is costed at least this many tokens when the fold point is chosen,
    so a short stand-in line and the longer text that later replaces it (kept within
    ``reserve``) pick the same fold point: the line can be swapped without moving the fold.
    """

    line: Callable[[Sequence[Turn]], str] = fold_summary
    reserve: int = 0


class TailAssembler:
    """Builds tails for one creature run; caches turn token counts across steps."""

    def __init__(
        self,
        skills: Mapping[str, Skill],
        tokenizer: Tokenizer,
        budgets: TailBudgets,
        available: int,
        turn_tokens: dict[str, int] | None = None,
    ) -> None:
        self._skills = skills
        self._tok = tokenizer
        self._b = budgets
        self._available = available  # context window minus prefix, reserve and margin
        # text → count for this tokenizer; a PromptCache shares one across builders (turns recur)
        self._turn_tokens: dict[str, int] = {} if turn_tokens is None else turn_tokens
        # the last conversation's turn costs: the next step's conversation starts with it
        # (the history is only appended to), so only its new turns are counted
        self._costed: tuple[tuple[Turn, ...], list[int]] = ((), [])
        # the last fold line ``fold_summary`` wrote, and the turns it stands for: the fold
        # point stays put for a block of steps, and the line covers every folded turn
        self._folded: tuple[tuple[Turn, ...], dict[str, int], str, str] | None = None

    def _count_turn(self, t: Turn) -> int:
        c = self._turn_tokens.get(t.content)
        if c is None:
            if len(self._turn_tokens) > 8192:
                self._turn_tokens.clear()
            c = self._tok.count(t.content)
            self._turn_tokens[t.content] = c
        return c + self._b.turn_overhead

    def _skills_text(self, names: Sequence[str]) -> str:
        parts = []
        for name in names:
            skill = self._skills.get(name)
            if skill is None:
                known = ", ".join(sorted(self._skills)) or "(none)"
                raise PromptError(
                    f"The loaded skill {name!r} is not one of this creature's skills; "
                    f"its skills are: {known}."
                )
            parts.append(f"### Skill: {skill.name}\n{skill.body.strip()}")
        return "## Loaded skills\n" + "\n\n".join(parts) if parts else ""

    def context_sections(
        self, state: TailState
    ) -> tuple[dict[str, str], dict[str, int], list[str]]:
        """The non-conversation sections, capped: (texts, tokens, names that were cut)."""
        b = self._b
        texts: dict[str, str] = {}
        tokens: dict[str, int] = {}
        flags: list[str] = []
        raw = {
            "loaded_skills": self._skills_text(state.loaded_skills),
            "memory": f"## Memory\n{state.memory.strip()}" if state.memory.strip() else "",
            "recalled": (
                "## Recalled\n" + "\n".join(f"- {r.strip()}" for r in state.recalled)
                if state.recalled
                else ""
            ),
            "status": status_text(state),
            "notice": f"## Notice\n{state.notice.strip()}" if state.notice else "",
        }
        caps = {
            "loaded_skills": b.loaded_skills,
            "memory": b.memory,
            "recalled": b.recalled,
            "status": b.status,
            "notice": b.notice,
        }
        for name, text in raw.items():
            if not text:
                continue
            cut, was_cut = truncate_to(text, caps[name], self._tok)
            if was_cut:
                flags.append(name)
            if cut:
                texts[name] = cut
                tokens[name] = self._tok.count(cut)
        return texts, tokens, flags

    def build(self, state: TailState) -> Tail:
        b = self._b
        tail = Tail()
        texts, tokens, flags = self.context_sections(state)
        other = sum(tokens.values())
        cap = self._available - other
        if b.conversation is not None:
            cap = min(cap, b.conversation)
        turns = tuple(state.conversation)
        if turns:
            kept, summary, folded, conv_tokens = self._fit(turns, cap, state.fold)
            tail.turns = kept
            tail.summary = summary
            tail.folded = folded
            if folded:
                flags.append("conversation")
            lines = [summary] if summary else []
            lines += [t.line() for t in kept]
            texts["conversation"] = "## Conversation\n" + "\n".join(lines)
            tokens["conversation"] = conv_tokens
        ordered = {k: texts[k] for k in TAIL_ORDER if k in texts}
        tail.texts = ordered
        tail.tokens = {k: tokens[k] for k in ordered}
        tail.truncated = tuple(k for k in TAIL_ORDER if k in flags)
        return tail

    def _line(self, line: Callable[[Sequence[Turn]], str], folded: tuple[Turn, ...]) -> str:
        """``line(folded)``. The deterministic line is counted from the last step's: the
        same folded turns, the same line; more of them (the fold moved on), only the new
        ones counted. Another policy's line may change: asked each time."""
        if line is not fold_summary:
            return line(folded)
        last = self._folded
        counts: dict[str, int] = {}
        first, m = "", 0
        if last is not None:  # (the comparisons below: of pointers, in C)
            if folded == last[0]:
                return last[3]
            m = len(last[0])
            if len(folded) > m and folded[:m] == last[0]:
                counts, first = dict(last[1]), last[2]
            else:
                m = 0
        first = _fold_count(folded[m:], counts, first)
        text = _fold_text(len(folded), counts, first)
        self._folded = (folded, counts, first, text)
        return text

    def _fit(self, turns: tuple[Turn, ...], cap: int, fold: FoldPolicy | None = None
             ) -> tuple[tuple[Turn, ...], str, int, int]:
        """(kept turns, summary line, turns folded, tokens used)."""
        line, reserve = (fold.line, fold.reserve) if fold is not None else (fold_summary, 0)
        cache, count, overhead = self._turn_tokens, self._tok.count, self._b.turn_overhead
        if len(cache) > 8192:
            cache.clear()
        known, costs = self._costed
        m = len(known)
        if m and turns[:m] == known:  # (the same turns: a comparison of pointers, in C)
            costs = costs[:]
        else:
            m, costs = 0, []
        for t in turns[m:]:  # inlined _count_turn
            c = cache.get(t.content)
            if c is None:
                c = cache[t.content] = count(t.content)
            costs.append(c + overhead)
        self._costed = (turns, costs)
        total = sum(costs)
        if total <= cap:
            return turns, "", 0, total
        # Fold the oldest turns in blocks of FOLD_BLOCK, keeping at least the newest turn.
        # Blocks keep the fold boundary still for several steps: a boundary that moved every
        # step would change the summary line each time and void the model server's cache
        # for the whole conversation after it.
        # A candidate whose kept turns alone leave no room for its fold line (costed at
        # least ``reserve``) cannot fit: its line is not written (the line covers every
        # folded turn, so writing each candidate's made a long conversation's every step
        # quadratic in its length), and the first that may fit is found by bisection of
        # the folded costs (what it folds costs at least ``total + floor - cap``).
        n = len(turns)
        floor = reserve + overhead
        folded = list(accumulate(costs, initial=0))  # folded[k]: the cost of turns[:k]
        least = bisect_left(folded, total + floor - cap)
        start = max(FOLD_BLOCK, -(-least // FOLD_BLOCK) * FOLD_BLOCK)
        for k in sorted({*range(start, n, FOLD_BLOCK), n - 1}):
            running = total - folded[k]
            if running + floor > cap:
                continue
            summary = self._line(line, turns[:k])
            used = running + max(self._tok.count(summary), reserve) + overhead
            if used <= cap:
                return turns[k:], summary, k, used
        raise ContextOverflow(
            f"The conversation cannot fit the context window: even with "
            f"{len(turns) - 1} older turns folded, the newest turn needs {costs[-1]} tokens "
            f"and only {cap} are left after the prefix, the other tail sections, the reply "
            f"reserve and the margin.",
            suggestion="raise the context window, shorten the persona, or lower tail caps",
        )


def status_text(state: TailState) -> str:
    """The status block ``state`` asks for ("" when it holds nothing)."""
    spec = DEFAULT_STATUS if state.status is True else state.status
    if spec is False:
        return ""
    items = [f"Step {state.step}"] if spec.step else []
    now = state.now
    if now is not None and spec.date != "off":
        items.append(now.date().isoformat() if spec.date == "day"
                     else now.isoformat(timespec="minutes" if spec.date == "minute" else "seconds"))
    return "## Status\n" + " · ".join(items) if items else ""
