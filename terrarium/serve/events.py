"""A session's events, numbered and durable before anyone sees them.

Each event a session's runtime publishes gets the session's next sequence number at the
moment it is published (the bus calls ``SessionEvents.offer`` synchronously, so the order
is the publish order) and is written once: one row of the run's ``events`` table with its
number (``seq``), added to the server's one ``LogWriter``, whose commit also holds the
sessions' messages, consumptions and turns (concurrent sessions share one transaction).
The runtime then writes no event itself (``RuntimeOptions.log_events``). A run on a broker
keeps its own log connection (its writes are mirrored), so there the runtime writes its
events and the ``EventWriter`` keeps the numbered copy in ``session_events`` (where logs of
earlier versions kept every session's events; they are read from both). Only committed
events are handed to clients:
a client that saw event N and reconnects with ``after=N`` (or ``Last-Event-ID: N``) gets
N+1, N+2, ... exactly once, even after the server was killed and restarted, because an
event a crash lost was never shown and the numbering goes on from the last committed one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel

from terrarium.channels.log import NUMBERED_EVENT_SQL, DurableLog, sent_json, with_payload
from terrarium.channels.log_rows import batch_rows, unbatched
from terrarium.channels.writer import LogWriter
from terrarium.events import Event, MessageSent, TurnEnded, event_json

__all__ = ["EventWriter", "SessionEvents", "event_json"]

_EVENT_SQL = "INSERT OR IGNORE INTO session_events(session_id, seq, kind, data) VALUES (?,?,?,?)"
_TURNS_SQL = "UPDATE sessions SET turns=turns+?, updated=? WHERE id=?"
RECENT = 128  # events kept in memory per session for reconnects; older ones are read back


_READ_SQL = (
    "SELECT seq, kind, data FROM events WHERE run_id=? AND seq>? AND seq<=?"
    " UNION ALL SELECT seq, kind, data FROM session_events WHERE session_id=? AND seq>?"
    " AND seq<=? ORDER BY seq LIMIT ?")


class SessionEvents:
    """One session's numbered events: what is committed, and a wait for more.

    ``shared``: the server's log writer, to write each event as the run's numbered row;
    None: through ``writer`` into ``session_events`` (a run on a broker)."""

    def __init__(self, session_id: str, run_id: str, log: DurableLog, writer: EventWriter,
                 shared: LogWriter | None = None) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.log = log
        self.writer = writer
        self.shared = shared
        rows = log.query("SELECT max(seq) FROM events WHERE run_id=? AND seq IS NOT NULL"
                         " UNION ALL SELECT max(seq) FROM session_events WHERE session_id=?",
                         (run_id, session_id))
        self.committed = max(int(r[0] or 0) for r in rows)
        self.next_seq = self.committed + 1
        self.recent: deque[tuple[int, str, str]] = deque(maxlen=RECENT)  # (seq, kind, json)
        self._changed: anyio.Event | None = None  # made by a waiter, set and dropped at a commit
        self.closed = False
        # told at publish time (``listen``), each only of the event types it observes
        self.listeners: tuple[Callable[[int, Event], None], ...] = ()
        self._told: dict[type, tuple[Callable[[int, Event], None], ...]] = {}
        self._batch: object = None  # the shared writer's batch the rows below go in
        self._staged: list[tuple[int, str, str]] = []  # (seq, kind, text streamed)
        self._texts: list[tuple[float, str | None, str]] = []  # (ts, creature, text stored)
        self.streams = 0  # event streams open on it (the manager keeps it while any is)
        # called once every event published is committed (the manager forgets an unloaded
        # session's events then: a new object numbers on from the log's last event)
        self.on_settled: Callable[[], None] | None = None

    @property
    def last_seq(self) -> int:
        """The number of the newest event published (committed or about to be)."""
        return self.next_seq - 1

    def offer(self, event: Event) -> bool:
        """The bus's tap: number ``event`` and queue it to be written (returns False: the
        bus queues nothing for this subscriber; the writer has it)."""
        seq = self.next_seq
        self.next_seq = seq + 1
        cls = type(event)
        shared = self.shared
        if shared is None:
            data = event_json(event, seq)
            self.writer.put(self, seq, event.kind, data, cls is TurnEnded)
        else:
            if cls is MessageSent:
                # a message's payload is in its row (committed no later than this one): its
                # message_sent row leaves it out (a read of the log puts it back); the
                # event is encoded once, without it, and the payload put in for the stream
                stored = sent_json(event, seq)
                data = with_payload(stored, event.payload)  # type: ignore[attr-defined]
            else:
                data = stored = event_json(event, seq)
            # the event goes into the shared writer's next commit, as one row with the
            # session's other events of that commit (``_rows``); ``data`` streamed once
            # it is in (inline: twelve events a turn come this way)
            batch = shared.count()
            if batch is not self._batch:  # the first of this session's events in this commit
                self._batch, self._staged, self._texts = batch, [], []
                staged, texts = self._staged, self._texts
                batch.before.append(lambda: self._rows(batch, staged, texts))
                batch.after.append(lambda: self._committed(staged))
            self._staged.append((seq, event.kind, data))
            self._texts.append((event.ts, getattr(event, "creature", None), stored))
            if cls is TurnEnded:  # the session's turn count, in the same commit
                shared.put_row(_TURNS_SQL, (1, time.time(), self.session_id))
        told = self._told.get(cls)
        if told is None:
            told = self._told[cls] = tuple(
                fn for fn in self.listeners if _observes(fn, cls))
        for fn in told:
            fn(seq, event)
        return False

    def listen(self, fn: Callable[[int, Event], None]) -> None:
        """Tell ``fn`` every event as it is published (or, when the object it is a method
        of names the event types it ``OBSERVES``, those only)."""
        self.listeners = (*self.listeners, fn)
        self._told = {}

    def unlisten(self, fn: Callable[[int, Event], None]) -> None:
        self.listeners = tuple(f for f in self.listeners if f != fn)
        self._told = {}

    def _rows(self, batch: Any, staged: list[tuple[int, str, str]],
              texts: list[tuple[float, str | None, str]]) -> None:
        """Just before ``batch`` commits: this session's events in it as ``events`` rows
        (most as one: ``batch_rows``)."""
        batch.bucket(NUMBERED_EVENT_SQL).extend(
            batch_rows(self.run_id, [r[0] for r in staged], [r[1] for r in staged], texts))

    @property
    def settled(self) -> bool:
        """Every event published is committed: the log alone numbers on right."""
        return self.committed >= self.next_seq - 1

    def _committed(self, rows: list[tuple[int, str, str]]) -> None:
        self.recent.extend(rows)
        self.committed = max(self.committed, rows[-1][0])
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        if self.on_settled is not None and self.settled:
            fn, self.on_settled = self.on_settled, None
            fn()

    def close(self) -> None:
        """No more events will come (the session was deleted): wake every waiter."""
        self.closed = True
        if self._changed is not None:
            self._changed.set()

    def read(self, after: int, limit: int = 1000) -> list[tuple[int, str, str]]:
        """Committed events with seq > ``after``, oldest first (at most ``limit``)."""
        if after >= self.committed:
            return []
        recent = self.recent
        if recent and recent[0][0] <= after + 1:
            # the newest few, found from the end (a reader is usually one commit behind):
            # not a scan of every row kept
            out = []
            for r in reversed(recent):
                if r[0] <= after:
                    break
                out.append(r)
            out.reverse()
            return out[:limit]
        got = self.log.query(_READ_SQL, (self.run_id, after, self.committed,
                                         self.session_id, after, self.committed, limit))
        # a batch row holds several events (its seq the last one's): taken apart, the ones
        # after ``after`` kept
        rows = [r for r in unbatched(got, 1, 2, 0) if r[0] > after][:limit]
        datas = self.log.with_payloads([r[2] for r in rows])  # (message_sent: see offer)
        return [(int(r[0]), r[1], d) for r, d in zip(rows, datas, strict=True)]

    async def wait(self, after: int, patience: float | None = None
                   ) -> list[tuple[int, str, str]]:
        """The next committed events after ``after``; [] when ``patience`` seconds pass
        first or the session is closed."""
        rows = self.read(after)
        if rows or self.closed:  # (no timer to set up when they are there already)
            return rows
        with anyio.move_on_after(patience):
            while not self.closed:
                if self._changed is None:
                    self._changed = anyio.Event()
                await self._changed.wait()
                rows = self.read(after)
                if rows:
                    return rows
        return []


def _observes(fn: Callable[[int, Event], None], cls: type) -> bool:
    observes = getattr(getattr(fn, "__self__", None), "OBSERVES", None)
    return observes is None or issubclass(cls, observes)


class EventWriter:
    """Commits every session's events, one transaction per batch (run ``run`` in a task
    group); the sessions' turn counts go in the same transaction as their TurnEnded."""

    def __init__(self, log: DurableLog) -> None:
        self.log = log
        self._rows: list[tuple[SessionEvents, int, str, str, bool]] = []
        self._wake = anyio.Event()
        self.batches = 0

    def put(self, events: SessionEvents, seq: int, kind: str, data: str, turn: bool) -> None:
        self._rows.append((events, seq, kind, data, turn))
        self._wake.set()

    def flush(self) -> None:
        """Write what is queued now (also at shutdown, after the sessions have stopped)."""
        rows, self._rows = self._rows, []
        if not rows:
            return
        now = time.time()
        turns: dict[str, int] = {}
        for ev, _, _, _, turn in rows:
            if turn:
                turns[ev.session_id] = turns.get(ev.session_id, 0) + 1
        ops: list[tuple[str, list[tuple[Any, ...]]]] = [
            (_EVENT_SQL, [(ev.session_id, seq, kind, data) for ev, seq, kind, data, _ in rows])]
        if turns:
            ops.append((_TURNS_SQL, [(n, now, sid) for sid, n in turns.items()]))
        self.log.write_batch(ops)
        self.batches += 1
        by_session: dict[int, tuple[SessionEvents, list[tuple[int, str, str]]]] = {}
        for ev, seq, kind, data, _ in rows:
            by_session.setdefault(id(ev), (ev, []))[1].append((seq, kind, data))
        for ev, done in by_session.values():
            ev._committed(done)

    async def run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                self.flush()
                await anyio.lowlevel.checkpoint()  # let publishers add to the next batch
        finally:
            self.flush()
