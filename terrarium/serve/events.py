"""A session's events, numbered and durable before anyone sees them.

Each event a session's runtime publishes gets the session's next sequence number at the
moment it is published (the bus calls ``SessionEvents.offer`` synchronously, so the order
is the publish order), and goes to the one ``EventWriter``, which commits events of every
session in one SQLite transaction per batch. Only committed events are handed to clients:
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

from terrarium.channels.log import DurableLog
from terrarium.events import Event, TurnEnded, event_json

__all__ = ["EventWriter", "SessionEvents", "event_json"]

_EVENT_SQL = "INSERT OR IGNORE INTO session_events(session_id, seq, kind, data) VALUES (?,?,?,?)"
_TURNS_SQL = "UPDATE sessions SET turns=turns+?, updated=? WHERE id=?"
RECENT = 128  # events kept in memory per session for reconnects; older ones are read back


class SessionEvents:
    """One session's numbered events: what is committed, and a wait for more."""

    def __init__(self, session_id: str, log: DurableLog, writer: EventWriter) -> None:
        self.session_id = session_id
        self.log = log
        self.writer = writer
        rows = log.query("SELECT max(seq) FROM session_events WHERE session_id=?",
                         (session_id,))
        self.committed = int(rows[0][0] or 0)
        self.next_seq = self.committed + 1
        self.recent: deque[tuple[int, str, str]] = deque(maxlen=RECENT)  # (seq, kind, json)
        self._changed = anyio.Event()
        self.closed = False
        self.listeners: list[Callable[[int, Event], None]] = []  # told at publish time

    @property
    def last_seq(self) -> int:
        """The number of the newest event published (committed or about to be)."""
        return self.next_seq - 1

    def offer(self, event: Event) -> bool:
        """The bus's ``accept`` hook: number ``event`` and queue it to be written. Returns
        False so the bus queues nothing for this subscriber (the writer has it)."""
        seq = self.next_seq
        self.next_seq += 1
        self.writer.put(self, seq, event.kind, event_json(event, seq),
                        isinstance(event, TurnEnded))
        for fn in self.listeners:
            fn(seq, event)
        return False

    def _committed(self, rows: list[tuple[int, str, str]]) -> None:
        self.recent.extend(rows)
        self.committed = max(self.committed, rows[-1][0])
        self._changed.set()
        self._changed = anyio.Event()

    def close(self) -> None:
        """No more events will come (the session was deleted): wake every waiter."""
        self.closed = True
        self._changed.set()

    def read(self, after: int, limit: int = 1000) -> list[tuple[int, str, str]]:
        """Committed events with seq > ``after``, oldest first (at most ``limit``)."""
        if after >= self.committed:
            return []
        if self.recent and self.recent[0][0] <= after + 1:
            return [r for r in self.recent if r[0] > after][:limit]
        rows = self.log.query(
            "SELECT seq, kind, data FROM session_events WHERE session_id=? AND seq>? AND seq<=?"
            " ORDER BY seq LIMIT ?", (self.session_id, after, self.committed, limit))
        return [(int(r[0]), r[1], r[2]) for r in rows]

    async def wait(self, after: int, patience: float | None = None
                   ) -> list[tuple[int, str, str]]:
        """The next committed events after ``after``; [] when ``patience`` seconds pass
        first or the session is closed."""
        with anyio.move_on_after(patience):
            while not self.closed:
                rows = self.read(after)
                if rows:
                    return rows
                await self._changed.wait()
        return []


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
