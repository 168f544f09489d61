"""Sub-agent runs and background jobs, folded from events for the monitor (no Textual here).

The runtime keeps no statuses or transcripts for sub-agents (their events go straight to
the bus, labelled ``parent/name``) and keeps jobs inside each creature's tool state, so
the event stream is the monitor's only source, live and in replay alike. Times shown are
event times: the screen never reads the wall clock here, so tests control every figure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from terrarium.events import (
    CreatureState,
    Event,
    JobEnded,
    JobStarted,
    OutputText,
    PromptBuilt,
    RunEnded,
    RunStarted,
    SubagentEnded,
    SubagentStarted,
    TranscriptAppended,
    TranscriptEntry,
)
from terrarium.tui.text import PromptView

MAX_RUNS = 50  # sub-agent runs kept per creature (oldest finished ones go first)
MAX_JOBS = 200  # jobs kept per creature
MAX_ENTRIES = 500  # transcript entries kept per sub-agent run
MAX_STREAM_CHARS = 4000
OUTPUT_KINDS = ("assistant", "tool_call", "tool_result")  # what counts as a job's output

SUBAGENT_KEY = "sub:"  # the team panel's row key prefix for a sub-agent run


def root_of(label: str) -> str:
    """The team creature a sub-agent label hangs under (``lead/historian`` → ``lead``)."""
    return label.split("/", 1)[0]


def is_subagent_label(name: str) -> bool:
    return "/" in name


@dataclass(slots=True)
class SubagentRun:
    """One run of one sub-agent: who started it, its state, and what it said."""

    run_id: str
    label: str  # "lead/historian", "lead/historian/scout"
    parent: str  # the caller's label ("lead", or "lead/historian" when nested)
    name: str
    depth: int
    task: str
    started: float
    state: str = "running"  # running (or the loop's live state), done, failed, lost
    live: str = "thinking"  # the loop's last CreatureState while running
    ended: float | None = None
    result: str = ""
    iterations: int = 0  # model calls so far (one prompt each); the final count at the end
    prompt_tokens: int = 0  # the prompts' sizes, summed: what the sub-agent sent the model
    entries: deque[TranscriptEntry] = field(default_factory=lambda: deque(maxlen=MAX_ENTRIES))
    streaming: str = ""
    prompt: PromptView | None = None

    @property
    def key(self) -> str:
        return SUBAGENT_KEY + self.run_id

    @property
    def running(self) -> bool:
        return self.ended is None and self.state == "running"

    @property
    def shown_state(self) -> str:
        """What the panel says: the loop's state while running, else how it ended."""
        return self.live if self.running else self.state


@dataclass(slots=True)
class JobRow:
    """One background job of one creature, as the jobs list shows it."""

    creature: str
    job_id: str
    call: str
    args: dict[str, Any]
    started: float
    status: str = "running"  # running, done, failed, cancelled, lost
    ended: float | None = None
    result: str = ""
    subagent: str | None = None  # the run id of the sub-agent run this job is, if any

    def elapsed(self, now: float) -> float:
        return max((self.ended if self.ended is not None else now) - self.started, 0.0)


class Delegations:
    """Every creature's sub-agent runs and jobs; ``apply`` says which creatures changed."""

    def __init__(self) -> None:
        self.runs: dict[str, SubagentRun] = {}  # by run id, in start order
        self.jobs: dict[tuple[str, str], JobRow] = {}  # by (creature, job id), in start order
        self.now = 0.0  # the latest event time seen: "now" for running jobs' elapsed
        self._active: dict[str, list[str]] = {}  # label -> run ids running under it

    # -- folding ---------------------------------------------------------------------

    def apply(self, e: Event) -> set[str]:
        """Fold one event; return the root creatures whose sub-agents or jobs changed."""
        self.now = max(self.now, e.ts)
        if isinstance(e, SubagentStarted):
            return self._started(e)
        if isinstance(e, SubagentEnded):
            return self._ended(e)
        if isinstance(e, JobStarted):
            self.jobs[(e.creature, e.job_id)] = JobRow(e.creature, e.job_id, e.call,
                                                       dict(e.args), e.ts)
            self._trim_jobs(e.creature)
            return {e.creature}
        if isinstance(e, JobEnded):
            job = self.jobs.get((e.creature, e.job_id))
            if job is None:
                return set()
            job.status, job.ended, job.result = e.status, e.ts, e.result
            return {e.creature}
        if isinstance(e, RunStarted | RunEnded):
            return self.lose_running(e.ts)
        creature = getattr(e, "creature", None)
        if not isinstance(creature, str) or not is_subagent_label(creature):
            return self._running_jobs_owner(e)
        run = self.current(creature)
        if run is None:
            return set()
        if isinstance(e, TranscriptAppended):
            run.entries.append(e.entry)
            run.streaming = ""
        elif isinstance(e, OutputText):
            run.streaming = (run.streaming + e.text)[-MAX_STREAM_CHARS:]
        elif isinstance(e, PromptBuilt):
            run.iterations += 1
            run.prompt_tokens += e.tokens
            run.prompt = PromptView.from_event(e)
        elif isinstance(e, CreatureState):
            run.live = e.state
        return {root_of(creature)}

    def apply_all(self, events: Iterable[Event]) -> set[str]:
        touched: set[str] = set()
        for e in events:
            touched |= self.apply(e)
        return touched

    def _running_jobs_owner(self, e: Event) -> set[str]:
        """A team creature's event: its running jobs' elapsed moved on with the time."""
        creature = getattr(e, "creature", None)
        if isinstance(creature, str) and any(
                j.status == "running" for (c, _), j in self.jobs.items() if c == creature):
            return {creature}
        return set()

    def _started(self, e: SubagentStarted) -> set[str]:
        label = f"{e.creature}/{e.subagent}"
        run = SubagentRun(e.run_id, label, e.creature, e.subagent, e.depth, e.task, e.ts)
        self.runs[e.run_id] = run
        self._active.setdefault(label, []).append(e.run_id)
        # a background job of the caller's that runs this sub-agent: the oldest unmatched one
        for job in self.jobs.values():
            if (job.creature == e.creature and job.call == e.subagent
                    and job.status == "running" and job.subagent is None):
                job.subagent = e.run_id
                break
        self._trim_runs(root_of(label))
        return {root_of(label)}

    def _ended(self, e: SubagentEnded) -> set[str]:
        run = self.runs.get(e.run_id)
        if run is None:
            return set()
        run.state = "done" if e.ok else "failed"
        run.ended, run.result = e.ts, e.result
        run.iterations = max(run.iterations, e.rounds)
        run.streaming = ""
        active = self._active.get(run.label, [])
        if e.run_id in active:
            active.remove(e.run_id)
        return {root_of(run.label)}

    def lose_running(self, ts: float) -> set[str]:
        """The run started again (resumed) or ended: what still ran was lost with it."""
        touched: set[str] = set()
        for job in self.jobs.values():
            if job.status == "running":
                job.status, job.ended = "lost", ts
                job.result = job.result or "lost: the run stopped before the job ended"
                touched.add(job.creature)
        for run in self.runs.values():
            if run.running:
                run.state, run.ended = "lost", ts
                touched.add(root_of(run.label))
        self._active.clear()
        return touched

    def _trim_runs(self, creature: str) -> None:
        mine = [r for r in self.runs.values() if root_of(r.label) == creature]
        for r in mine[: max(len(mine) - MAX_RUNS, 0)]:
            if not r.running:
                del self.runs[r.run_id]

    def _trim_jobs(self, creature: str) -> None:
        mine = [k for k in self.jobs if k[0] == creature]
        for k in mine[: max(len(mine) - MAX_JOBS, 0)]:
            if self.jobs[k].status != "running":
                del self.jobs[k]

    # -- views -----------------------------------------------------------------------

    def current(self, label: str) -> SubagentRun | None:
        """The run a ``label``'s events belong to: its latest running one, else its last."""
        active = self._active.get(label)
        if active:
            return self.runs[active[-1]]
        for run in reversed(self.runs.values()):
            if run.label == label:
                return run
        return None

    def subagents_of(self, creature: str) -> list[SubagentRun]:
        """A creature's sub-agent runs as a tree, depth first, each level in start order."""
        runs = [r for r in self.runs.values() if root_of(r.label) == creature]
        children: dict[str, list[SubagentRun]] = {}
        for r in runs:
            children.setdefault(r.parent, []).append(r)
        out: list[SubagentRun] = []

        def walk(parent: str) -> None:
            for r in children.get(parent, []):
                out.append(r)
                if r.label in children:
                    walk(r.label)
                    children.pop(r.label)  # a label's children are listed once

        walk(creature)
        return out

    def jobs_of(self, creature: str) -> list[JobRow]:
        return [j for (c, _), j in self.jobs.items() if c == creature]

    def job(self, creature: str, job_id: str) -> JobRow | None:
        return self.jobs.get((creature, job_id))

    def run_by_key(self, key: str) -> SubagentRun | None:
        if not key.startswith(SUBAGENT_KEY):
            return None
        return self.runs.get(key[len(SUBAGENT_KEY):])

    def job_output(self, job: JobRow) -> str:
        """What a job has to show so far: its sub-agent's words and calls, then its result."""
        lines = [f"{job.job_id}  {job.call}  {job.status}"]
        if job.args:
            lines.append("args: " + ", ".join(f"{k}={v}" for k, v in sorted(job.args.items())))
        run = self.runs.get(job.subagent) if job.subagent else None
        if run is not None:
            lines.append(f"sub-agent {run.label} ({run.shown_state}):")
            for entry in run.entries:
                if entry.kind in OUTPUT_KINDS:
                    word = {"tool_call": "call", "tool_result": "result"}.get(entry.kind, "")
                    text = f"{word} {entry.name}: {entry.text}" if word else entry.text
                    lines.append(f"  {text.strip()}")
            if run.streaming:
                lines.append(f"  ▸ {run.streaming.strip()}")
        if job.status != "running":
            lines.append(f"result: {job.result}" if job.result else "no result")
        elif run is None:
            lines.append("running: no output yet")
        return "\n".join(lines)


def elapsed_text(seconds: float) -> str:
    """Short and stable: tenths under a minute, then minutes and seconds."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


__all__ = [
    "MAX_ENTRIES",
    "MAX_JOBS",
    "MAX_RUNS",
    "SUBAGENT_KEY",
    "Delegations",
    "JobRow",
    "SubagentRun",
    "elapsed_text",
    "is_subagent_label",
    "root_of",
]
