"""What a run leaves behind and what watchers read live: the log, statuses, transcripts.

The recorder opens (or resumes) the run in the durable log, writes the bus's events to it
in batches, records each turn, keeps every creature's status and a bounded transcript,
and closes the run with its final status. It knows nothing of how creatures are wired or
supervised: they hand it names, numbers and events.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from terrarium.channels.bus import EventBus
from terrarium.channels.log import (
    EVENT_SQL,
    TURN_SQL,
    DurableLog,
    RunStatus,
    TurnRecord,
    event_row,
    turn_row,
)
from terrarium.config import Team
from terrarium.controller.loop import TurnResult
from terrarium.crashpoints import crashpoint
from terrarium.events import (
    CreatureState,
    Event,
    JobEnded,
    JobStarted,
    MessageConsumed,
    OutputText,
    Reasoning,
    RunEnded,
    TranscriptAppended,
    TranscriptEntry,
)
from terrarium.runtime.api import CreatureStatus
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.history import ASK_KEY, SavedConversation, restore_history
from terrarium.runtime.options import ROOT, RuntimeOptions
from terrarium.runtime.sessions import ensure_session_tables

__all__ = ["LOG_FILE", "TRANSCRIPT_LIMIT", "Recorder"]

LOG_FILE = "terrarium.sqlite3"
TRANSCRIPT_LIMIT = 2000
# not written to the events table: per-token deltas, and consumptions (their own table has them)
# (a round's whole thinking is logged as one "reasoning" transcript entry; its deltas are not)
_UNLOGGED = (OutputText, MessageConsumed, Reasoning)
EVENT_WRITE_WAIT = 0.04
"""Seconds a local run's event writer gathers events before writing them. A turn's events
come in bursts (a reply's start: a dozen within a few ms), and writing each burst as it
came ran the JSON encoding, the redaction and an SQLite commit on the event loop between
the steps to the first audio (issue 29: the framework's share p50 21 -> 12 ms without the
writes, busy machine). Gathered, they are written while the loop waits for the model. A log
mirrored to a broker, or one a session's clients read, is written at once."""


class Recorder:
    """Statuses, transcripts and the durable log of one run."""

    def __init__(self, bus: EventBus, options: RuntimeOptions) -> None:
        self.bus = bus
        self.options = options  # its ``on_event`` is read when an event passes, as it may change
        self.lost_jobs: list[str] = []  # what the end of the run cut off (jobs_cut)
        self.statuses: dict[str, CreatureStatus] = {}
        self.transcripts: dict[str, deque[TranscriptEntry]] = {}
        self.log: DurableLog | None = None
        self.log_path: Path | None = None
        self.run_id = ""
        self.turns_total = 0
        # what this process saved of each creature's conversation (runtime/history.py)
        self._saved: dict[str, SavedConversation] = {}
        self.results: list[tuple[str, TurnResult]] = []
        self.events_pending = False  # the event writer holds events not yet written
        self._written: anyio.Event | None = None  # set when they are (events_written)

    def add(self, name: str, model: str) -> None:
        self.statuses[name] = CreatureStatus(name, model)
        self.transcripts[name] = deque(maxlen=TRANSCRIPT_LIMIT)

    def open(self, runs_dir: Path, team: Team, resume: str | None,
             join: str | None = None) -> None:
        """Start a run in ``runs_dir``'s log, take up run ``resume`` again, or (a worker)
        record its part of run ``join`` that another process started."""
        runs_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = runs_dir / LOG_FILE
        self.log = self.options.log or DurableLog(self.log_path)
        if join:
            self.run_id = join
            if any(r.run_id == join for r in self.log.runs()):
                self.log.set_run_status(join, "running")
            else:
                self.log.start_run(team.name, team.path, run_id=join)
        elif resume:
            info = self.log.run(resume)  # raises when unknown
            self.run_id = info.run_id
            self.log.set_run_status(self.run_id, "running")
        else:
            self.run_id = self.log.start_run(team.name, team.path)

    def save_history(self, creature: str, message_id: str | None, controller: Any) -> None:
        """A session's run: keep the creature's conversation after the turn over
        ``message_id`` (before that message is marked consumed; see runtime/sessions.py)."""
        ops = self.history_ops(creature, message_id, controller)
        if ops and self.log is not None:
            try:
                self.log.write_batch(ops)
            except BaseException:
                self.history_lost(creature)
                raise
            crashpoint("session.history_saved")

    def history_ops(self, creature: str, message_id: str | None, controller: Any
                    ) -> list[tuple[str, list[tuple[Any, ...]]]]:
        """The writes that keep the conversation (none when the run keeps none), for the
        caller to commit with the turn's consumption."""
        if self.log is None or not self.options.keep_history or controller is None:
            return []
        saved = self._saved.get(creature)
        if saved is None:
            saved = self._saved[creature] = SavedConversation()
        return saved.ops(self.run_id, creature, message_id or ASK_KEY, controller)

    def history_lost(self, creature: str) -> None:
        """The writes ``history_ops`` gave were not committed (their transaction failed or
        was cut): the next save of ``creature``'s conversation writes it whole again."""
        if (saved := self._saved.get(creature)) is not None:
            saved.forget()

    def keep_merge(self, creature: str, ids: list[str]) -> None:
        """Commit which messages a merged turn takes (``double_texting: merge``), before the
        turn runs: done again after a crash, it takes the same ones (``merged``), so what
        it sent under its first message's keys covers the same messages."""
        if self.log is not None:
            self.log.record_effect(self.run_id, _merge_key(creature, ids[0]), creature,
                                   "double_texting", True, json.dumps(ids))

    def merged(self, creature: str, first: str) -> list[str]:
        """The ids a merged turn over ``first`` took, as ``keep_merge`` committed them."""
        kept = self.log.effect(self.run_id, _merge_key(creature, first)) if self.log else None
        return list(json.loads(kept[1])) if kept is not None else []

    def restore_histories(self, creatures: Mapping[str, RunningCreature]) -> int:
        """A session's run taken up again: each creature gets its saved conversation."""
        if self.log is None or not self.options.keep_history:
            return 0
        ensure_session_tables(self.log)
        return sum(restore_history(self.log, self.run_id, c.name, c.controller)
                   for c in creatures.values() if c.controller is not None)

    def fail(self, status: RunStatus = "failed") -> None:
        """The run could not start (``interrupted``: Ctrl-C stopped its start): mark it
        so and close the log."""
        if self.log is not None:
            self.log.set_run_status(self.run_id, status)
            if self.log is not self.options.log:  # a log the caller lent stays open
                self.log.close()

    def jobs_cut(self, ended: Sequence[JobEnded], unread: int) -> None:
        """Background jobs the end of the run cut off (each recorded ended ``cancelled``,
        written now: the event writer stops with the run), and how many finished results
        never reached their creature (``lost_jobs`` says both in sentences)."""
        self.lost_jobs = [f"{ev.creature}: {ev.job_id} ({ev.call}) was cancelled by the end "
                          "of the run" for ev in ended]
        if unread:
            self.lost_jobs.append(f"{unread} finished job result(s) never reached their "
                                  "creature")
        for ev in ended:  # written here, not through the bus: its writer is about to stop
            if self.log is not None:
                with contextlib.suppress(Exception):
                    self.log.record_event(self.run_id, ev)
            if self.options.on_event:
                self.options.on_event(ev)

    def close(self, status: RunStatus) -> None:
        """Mark the run ended with ``status`` and tell whoever still watches."""
        if self.log is None:
            return
        self.log.set_run_status(self.run_id, status)
        # the event writer has stopped; the runs table holds the status, so the event goes
        # only to whoever still watches
        ended = RunEnded(run_id=self.run_id, status=status)
        self.bus.publish(ended)
        if self.options.on_event:
            self.options.on_event(ended)
        if self.log is not self.options.log:  # a log the caller lent stays open
            self.log.close()

    async def write_events(self, sub: Any) -> None:
        """Write events to the log in small batches; per-token output deltas are skipped.

        ``on_event`` hears each event as it comes, so what it shows keeps the events'
        order and pace; a local run's log write gathers for ``EVENT_WRITE_WAIT`` first (see
        there), and a batch gathering when the run ends is still written."""
        tell = self.options.on_event
        with sub:  # left (and its stream closed) when the run cancels this task
            async for ev in sub:
                batch = [ev]
                self.events_pending = True
                try:
                    if tell:
                        tell(ev)
                    if self.log is not None and self.log.on_write is None \
                            and not self.options.log_output_text and self.options.log_events:
                        with anyio.move_on_after(EVENT_WRITE_WAIT):
                            async for more in sub:
                                batch.append(more)
                                if tell:
                                    tell(more)
                finally:
                    with contextlib.suppress(anyio.ClosedResourceError):
                        rest = sub.drain()
                        batch += rest
                        if tell:
                            for e in rest:
                                tell(e)
                    self.events_pending = False
                    self._write_events(batch)
                    if self._written is not None:
                        self._written.set()
                        self._written = None

    async def events_written(self) -> None:
        """Return once the events published so far are in the log (and told ``on_event``)."""
        await anyio.lowlevel.checkpoint()  # the writer takes what was just published
        if self.events_pending:
            if self._written is None:
                self._written = anyio.Event()
            await self._written.wait()

    def _write_events(self, batch: list[Event]) -> None:
        """One batch into the log (one transaction)."""
        assert self.log is not None
        rows = ([event_row(self.run_id, e) for e in self._loggable(batch)]
                if self.options.log_events else None)  # (else the caller writes them)
        if rows:
            with contextlib.suppress(Exception):
                self.log.write_batch([(EVENT_SQL, rows)])

    def _loggable(self, batch: list[Event]) -> list[Event]:
        """The batch's events that go in the log: with ``log_output_text`` (a session's
        creature in a worker, whose clients read the log) each run of output deltas of one
        output joined into one ``OutputText``."""
        if not self.options.log_output_text:
            return [e for e in batch if not isinstance(e, _UNLOGGED)]
        out: list[Event] = []
        for e in batch:
            if isinstance(e, OutputText):
                last = out[-1] if out else None
                if (isinstance(last, OutputText) and last.creature == e.creature
                        and last.output == e.output):
                    out[-1] = dataclasses.replace(last, text=last.text + e.text)
                else:
                    out.append(e)
            elif not isinstance(e, _UNLOGGED):
                out.append(e)
        return out

    def consumed(self, creature: str, message_id: str) -> bool:
        """Whether the log has ``creature``'s consumption of ``message_id`` (a broker may
        hand a message again whose ack was lost: its turn was done)."""
        if self.log is None:
            return False
        return bool(self.log.query(
            "SELECT 1 FROM consumptions WHERE message_id=? AND receiver=?",
            (message_id, creature)))

    def emitter(self, name: str) -> Callable[[Event], None]:
        """The ``emit`` a creature's controller reports through: status and transcript
        first, then the bus (a repeated state is dropped)."""
        status = self.statuses[name]

        def emit(ev: Event) -> None:
            if isinstance(ev, CreatureState):
                if status.state == ev.state:
                    return
                status.state = ev.state
            elif isinstance(ev, TranscriptAppended):
                self.transcripts[name].append(ev.entry)
            self.bus.publish(ev)

        return emit

    def entry(self, creature: str, kind: Any, text: str, turn: int) -> None:
        """A transcript line from the runtime itself, numbered with the creature's turn."""
        entry = TranscriptEntry(kind, text, time.time(), turn)
        self.transcripts[creature].append(entry)
        self.bus.publish(TranscriptAppended(creature=creature, entry=entry))

    def count_turn(self, creature: str, result: TurnResult) -> None:
        """Add a finished turn's numbers to the creature's status and the run's totals."""
        status = self.statuses[creature]
        status.turns += 1
        status.tokens_in += result.prompt_tokens
        status.tokens_out += result.completion_tokens
        status.cached_tokens += result.cached_tokens
        self.turns_total += 1
        if self.options.keep_results:
            self.results.append((creature, result))

    def refusal(self, sender: str, channel: str, reason: str) -> None:
        """Record a refusal the runtime itself made (not the hub's send checks)."""
        if self.log is not None:
            with contextlib.suppress(Exception):
                self.log.record_refusal(self.run_id, sender, channel, reason)

    def record_turn(self, creature: str, turn_index: int, result: TurnResult | None, *,
                    error: str | None = None, started: float | None = None,
                    into: list[tuple[str, list[tuple[Any, ...]]]] | None = None) -> None:
        """Write the turn's record, or add it to ``into`` (committed by the caller with the
        turn's consumption: one transaction per turn)."""
        if self.log is None:
            return
        rec = TurnRecord(
            creature=creature,
            turn_index=turn_index,
            prefix_hash=result.prefix_hash if result else None,
            prompt_tokens=result.prompt_tokens if result else 0,
            cached_tokens=result.cached_tokens if result else 0,
            completion_tokens=result.completion_tokens if result else 0,
            calls=[{"name": r.name, "ok": r.ok, "args": r.args, "result": r.result}
                   for r in (result.calls if result else [])],
            outputs={"text": result.text} if result and result.text else {},
            error=error,
            started=started or time.time(),
            ended=time.time(),
        )
        if into is not None:
            into.append((TURN_SQL, [turn_row(self.run_id, rec)]))
            return
        with contextlib.suppress(Exception):
            self.log.record_turn(self.run_id, rec)

    def outcome(self, creatures: Mapping[str, RunningCreature], *, timed_out: bool = False,
                degraded: bool = False) -> RunStatus:
        """How a run that ended without an error went: ``failed`` when every team creature
        that listens ended failed, ``degraded`` when some did, else ``timeout`` when
        ``--timeout`` stopped it, else ``completed``."""
        members = [n for n, c in creatures.items() if n != ROOT and c.parts.cdef.listen]
        failed = [n for n in members if self.statuses[n].state == "failed"]
        if not failed:
            return "degraded" if degraded else "timeout" if timed_out else "completed"
        return "failed" if len(failed) == len(members) else "degraded"

    def jobs_in_log(self) -> dict[str, tuple[dict[str, JobStarted], set[str]]]:
        """Each creature's background jobs as the log has them: the recorded starts by job
        id, and the ids whose end was recorded (what a resumed run compares)."""
        out: dict[str, tuple[dict[str, JobStarted], set[str]]] = {}
        if self.log is None:
            return out
        for ev in self.log.typed_events(self.run_id, (JobStarted.kind, JobEnded.kind)):
            if isinstance(ev, JobStarted):
                out.setdefault(ev.creature, ({}, set()))[0][ev.job_id] = ev
            elif isinstance(ev, JobEnded):
                out.setdefault(ev.creature, ({}, set()))[1].add(ev.job_id)
        return out

    def failed_creatures(self) -> dict[str, str]:
        """Each creature that ended failed, with its last error."""
        return {n: s.last_error or "failed" for n, s in self.statuses.items()
                if s.state == "failed"}


def _merge_key(creature: str, first: str) -> str:
    return f"{creature}/{first}/merged"
