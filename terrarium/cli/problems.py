"""What went wrong in a run, as the console tells it: one line per problem and a tally.

Every refusal, invalid call, dropped or empty output, tool error and give-up reaches the
console as a typed event (a transcript entry, a refused message, an error). This module
turns each into one line naming the creature, what happened and why, and keeps the count
the closing summary prints. It also decides whether the run was *degraded* (exit 3): a
creature gave up, a refusal was never made good (no successful call of the same name
later in the same turn), or a creature could not take a message, so a run never exits 0
with a message silently lost. The user's own input a channel refused is counted too
(``input_refused``): ``run`` says it at once, and the summary must not then say "no
problems"; it does not degrade the run, as the user was told and the run goes on.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from terrarium.events import (
    ApprovalDecided,
    ErrorEvent,
    Event,
    JobEnded,
    MessageRefused,
    Missed,
    PluginFailed,
    SubagentEnded,
    TranscriptAppended,
    TurnEnded,
    TurnStarted,
)

__all__ = ["PROBLEM_KINDS", "Problem", "ProblemTracker"]

ProblemKind = Literal["refused", "invalid", "dropped", "empty", "tool error", "gave up",
                      "error", "failed", "lost job", "missed"]
PROBLEM_KINDS: tuple[ProblemKind, ...] = (
    "refused", "invalid", "dropped", "empty", "tool error", "failed", "lost job", "error",
    "gave up", "missed")
# how the closing summary names a count of each kind
_NOUN = {"refused": ("refusal", "refusals"), "invalid": ("invalid call", "invalid calls"),
         "dropped": ("dropped output", "dropped outputs"),
         "empty": ("empty output", "empty outputs"),
         "tool error": ("tool error", "tool errors"),
         "failed": ("failed job or sub-agent", "failed jobs or sub-agents"),
         "lost job": ("job cut off by the end of the run", "jobs cut off by the end of the run"),
         "error": ("error", "errors"), "gave up": ("give-up", "give-ups"),
         "missed": ("events not shown", "events not shown")}

# runtime notices that are problems, by how they start (controller, reply guard, scanner)
_NOTICE_KINDS: tuple[tuple[str, ProblemKind], ...] = (
    ("not spoken", "dropped"), ("its start was spoken early", "dropped"),
    ("said instead", "dropped"), ("spoken although", "dropped"),
    ("nothing sent on", "empty"), ("stopped after max_iterations", "gave up"),
    ("warm-up skipped", "error"),
)
_INVALID_NOTICE = ("is not a known call", "was never finished", "was never closed")


_USER = "user"  # the sender name of the user's input (runtime.options.USER)
_INPUT = "input"  # what a Problem of the user's refused input is about


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing that went wrong: its kind, who, what (a call, a channel) and why."""

    kind: ProblemKind
    creature: str
    what: str
    why: str
    lost: bool = False  # a message the creature could not take (``what`` names it)

    def line(self) -> str:
        if (self.creature, self.what) == (_USER, _INPUT):
            return f"  [{self.kind}] your input was not sent: {_one_line(self.why)}"
        what = f"{self.what}: " if self.what else ""
        return f"  [{self.kind}] {self.creature}: {what}{_one_line(self.why)}"


@dataclass(slots=True)
class ProblemTracker:
    """Feed it every event; it returns the problem an event is (or None) and keeps count."""

    problems: list[Problem] = field(default_factory=list)
    # per creature: refused calls of the turn in progress, not yet made good (name -> why)
    _open: dict[str, dict[str, Problem]] = field(default_factory=dict)
    unresolved: list[Problem] = field(default_factory=list)
    _refused_sends: set[tuple[str, str]] = field(default_factory=set)
    _approvals_refused: set[tuple[str, str]] = field(default_factory=set)
    inputs_not_sent: list[Problem] = field(default_factory=list)

    def input_refused(self, why: str) -> Problem:
        """The user's input a channel refused (``run`` says it at once): counted, kept
        apart from what degrades the run."""
        p = Problem("refused", _USER, _INPUT, why)
        self.problems.append(p)
        self.inputs_not_sent.append(p)
        return p

    def job_lost(self, what: str) -> Problem:
        """A background job (or its result) the end of the run cut off: the run is
        degraded (``TeamRuntime.lost_jobs``), and the summary says why."""
        p = Problem("lost job", "", "", what)
        self.problems.append(p)
        self.unresolved.append(p)
        return p

    def feed(self, ev: Event) -> Problem | None:
        problem = self._classify(ev)
        if problem is not None:
            self.problems.append(problem)
        return problem

    def _classify(self, ev: Event) -> Problem | None:
        if isinstance(ev, TurnStarted):
            self._close_turn(ev.creature)
        elif isinstance(ev, TurnEnded):
            self._close_turn(ev.creature)
        elif isinstance(ev, MessageRefused):
            if ev.receiver:  # a message the creature could not take: lost to it for good
                frm = "your input" if ev.sender == _USER else f"a message from {ev.sender}"
                why = ev.reason.partition(f" was refused by {ev.receiver}: ")[2] or ev.reason
                p = Problem("refused", ev.receiver,
                            frm + (f" on {ev.channel}" if ev.channel else ""), why, lost=True)
                self.unresolved.append(p)
                return p
            if ev.sender == _USER:  # `run` says those itself, at once (input_refused)
                return None
            p = Problem("refused", ev.sender, f"send on {ev.channel}", ev.reason)
            self._refused_sends.add((ev.sender, ev.channel))
            self._open.setdefault(ev.sender, {})[f"send_{ev.channel}"] = p
            return p
        elif isinstance(ev, TranscriptAppended):
            return self._entry(ev)
        elif isinstance(ev, ApprovalDecided) and not ev.approved and ev.by == "nobody":
            self._approvals_refused.add((ev.creature, ev.tool))
            p = Problem("refused", ev.creature, f"call {ev.tool}", ev.reason)
            self._open.setdefault(ev.creature, {})[ev.tool] = p
            return p
        elif isinstance(ev, ErrorEvent):
            who = ev.creature or "run"
            if ev.message.startswith("gave up"):
                p = Problem("gave up", who, "", ev.message.removeprefix("gave up").strip())
                self.unresolved.append(p)
                return p
            return Problem("error", who, "", ev.message)
        elif isinstance(ev, SubagentEnded) and not ev.ok:
            return Problem("failed", ev.creature, f"sub-agent {ev.subagent}", ev.result)
        elif isinstance(ev, JobEnded) and ev.status == "failed":
            return Problem("failed", ev.creature, f"job {ev.job_id} ({ev.call})", ev.result)
        elif isinstance(ev, PluginFailed):
            return Problem("error", ev.creature, f"plugin {ev.plugin}.{ev.hook}", ev.error)
        elif isinstance(ev, Missed):
            return Problem("missed", "console", "", f"{ev.count} events not shown "
                           "(the terminal was too slow)")
        return None

    def _entry(self, ev: TranscriptAppended) -> Problem | None:
        e, who = ev.entry, ev.creature
        if e.kind == "tool_result":
            name = e.name or "?"
            kind = str(e.data.get("kind", ""))
            if e.data.get("ok", True):
                self._open.get(who, {}).pop(name, None)  # a good call makes an earlier one good
                return None
            if kind == "invalid":
                p = Problem("invalid", who, f"call {name}", e.text)
                self._open.setdefault(who, {})[name] = p
                return p
            if kind == "send":
                channel = name.removeprefix("send_")
                if (who, channel) in self._refused_sends:  # already told as the refusal
                    self._refused_sends.discard((who, channel))
                    return None
                p = Problem("refused", who, f"call {name}", e.text.removeprefix("Refused: "))
                self._open.setdefault(who, {})[name] = p
                return p
            if kind == "output":
                return Problem("dropped", who, f"call {name}", e.text)
            if (who, name) in self._approvals_refused:
                self._approvals_refused.discard((who, name))
                return None
            return Problem("tool error", who, f"call {name}", e.text)
        if e.kind == "notice":
            if any(s in e.text for s in _INVALID_NOTICE):
                return Problem("invalid", who, "", e.text)
            for start, kind in _NOTICE_KINDS:
                if e.text.startswith(start):
                    return Problem(kind, who, "", e.text)
        return None

    def _close_turn(self, creature: str) -> None:
        """The creature's turn is over: what it left refused stays refused."""
        left = self._open.pop(creature, {})
        self.unresolved.extend(left.values())

    def finish(self) -> None:
        """The run is over: every turn still open is closed."""
        for creature in list(self._open):
            self._close_turn(creature)

    @property
    def degraded(self) -> bool:
        """A give-up, or a refusal never made good: the run exits 3."""
        return bool(self.unresolved)

    def counts(self) -> dict[str, int]:
        c = Counter(p.kind for p in self.problems)
        return {k: c[k] for k in PROBLEM_KINDS if c[k]}

    def summary(self) -> str:
        """``2 refusals (1 not made good, 1 input of yours not sent), 2 tool errors`` or
        ``no problems``."""
        bits: list[str] = []
        left = Counter(p.kind for p in self.unresolved if not p.lost)
        lost = sum(p.lost for p in self.unresolved)
        for kind, n in self.counts().items():
            noun = _NOUN[kind][n != 1]
            notes = [f"{left[kind]} not made good"] if kind in ("refused", "invalid") \
                and left[kind] else []
            if kind == "refused" and lost:
                notes.append(f"{lost} message{'s' * (lost != 1)} a creature could not take")
            if kind == "refused" and (k := len(self.inputs_not_sent)):
                notes.append(f"{k} input{'s' * (k != 1)} of yours not sent")
            extra = f" ({', '.join(notes)})" if notes else ""
            bits.append(f"{n} {noun}{extra}")
        return ", ".join(bits) if bits else "no problems"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
