"""A session's creatures that run in workers, as the process hosting the rest sees them.

``terrarium serve --broker URL --remote bot`` hosts a session's other creatures itself;
``bot`` runs in a ``terrarium worker --sessions`` (runtime/session_workers.py). Whatever
the worker does reaches the broker as its mirrored log writes (the run's log stream); the
hosting process follows that stream (:class:`RemoteCreatures`), replays the writes into its
own log (messages, consumptions, turns, the worker's saved conversations) and tells the
session the events about its remote creatures, so a client sees the worker's turns as if
they ran here. The position read is saved with the replayed writes (one transaction), so a
batch is replayed and told once.

A message for a remote creature that no worker takes is not met with silence: after
``remote_wait`` seconds the session hears ``CreatureWaiting`` saying what to start.

:func:`import_history` is the worker's side: before a worker runs a session's creature,
it takes the creature's saved conversations and consumptions from the log stream, so the
conversation goes on from the newest one whose message was consumed, whoever ran it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import anyio

from terrarium.channels.log import CONSUME_SQL, EVENT_SQL, DurableLog
from terrarium.events import (
    CreatureWaiting,
    Event,
    MessageConsumed,
    TurnEnded,
    TurnStarted,
    event_from_dict,
)
from terrarium.runtime.history import HISTORY_SQL, PART_SQL
from terrarium.runtime.sessions import ensure_session_tables

if TYPE_CHECKING:  # nats-py loads only for a run on a broker
    from terrarium.channels.nats import NatsTransport

__all__ = ["CURSOR_TABLE", "RemoteCreatures", "import_history"]

CURSOR_TABLE = ("CREATE TABLE IF NOT EXISTS remote_cursors(run_id TEXT PRIMARY KEY,"
                " seq INTEGER NOT NULL) WITHOUT ROWID")
_CURSOR_SQL = "INSERT OR REPLACE INTO remote_cursors(run_id, seq) VALUES (?,?)"
_OLDEST_SQL = (
    "SELECT min(m.ts) FROM messages m, json_each(m.receivers) r WHERE m.run_id=? AND"
    " r.value=? AND NOT EXISTS (SELECT 1 FROM consumptions c WHERE c.message_id=m.id"
    " AND c.receiver=?)")


class RemoteCreatures:
    """Follow a run's log stream for what its creatures in other processes do."""

    def __init__(self, transport: NatsTransport, log: DurableLog, run_id: str,
                 remote: Collection[str], emit: Callable[[Event], None], *,
                 wait: float = 5.0, ack_wait: float = 30.0, team_path: str = "PATH") -> None:
        self.transport = transport
        self.log = log
        self.run_id = run_id
        self.remote = frozenset(remote)
        self.emit = emit
        self.wait = wait
        self.team_path = team_path
        self.last_seen: dict[str, float] = {}
        self.ack_wait = ack_wait
        self.told: set[str] = set()  # creatures whose wait was told (until they stir)
        self.in_turn: set[str] = set()  # creatures whose worker began a turn not yet ended
        log.apply_mirrored([], [(CURSOR_TABLE, [()])])  # local: not mirrored
        rows = log.query("SELECT seq FROM remote_cursors WHERE run_id=?", (run_id,))
        self.cursor = int(rows[0][0]) if rows else 0

    def pending(self) -> bool:
        """Whether a remote creature has a message whose consumption this process has not
        read back yet (its turn may be done, but its events are not all told here)."""
        names = sorted(self.remote)
        marks = ",".join("?" * len(names))
        return bool(self.log.query(
            f"SELECT 1 FROM messages m, json_each(m.receivers) r WHERE m.run_id=? AND"
            f" r.value IN ({marks}) AND NOT EXISTS (SELECT 1 FROM consumptions c WHERE"
            " c.message_id=m.id AND c.receiver=r.value) LIMIT 1", (self.run_id, *names)))

    async def run(self) -> None:
        """Follow and watch until cancelled (the run's end)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_waiting)
            await self._follow()

    async def _follow(self) -> None:
        from terrarium.channels.nats.sessions import log_batches

        own = self.transport.source
        async for seq, src, ops in log_batches(self.transport.js, self.run_id, self.cursor):
            if src == own or not ops:  # this process's own writes: already here
                continue
            events = self._events(ops)
            self.log.apply_mirrored(ops, [(_CURSOR_SQL, [(self.run_id, seq)])])
            self.cursor = seq
            now = time.time()
            for ev in events:
                who = _who(ev, self.remote)
                if who is not None:
                    self.last_seen[who] = now
                    self.told.discard(who)
                    if isinstance(ev, TurnStarted) and ev.creature == who:
                        self.in_turn.add(who)
                    elif isinstance(ev, TurnEnded) and ev.creature == who:
                        self.in_turn.discard(who)
                self.emit(ev)

    def _events(self, ops: list[tuple[str, list[list[Any]]]]) -> list[Event]:
        """The events about remote creatures among ``ops``, in order (a consumption is told
        as ``MessageConsumed``, as the hosting process's own are)."""
        out: list[Event] = []
        for sql, rows in ops:
            if sql == EVENT_SQL:
                for row in rows:
                    try:
                        ev = event_from_dict(json.loads(row[4]))
                    except (ValueError, KeyError, TypeError, IndexError):
                        continue  # a kind this version does not know
                    if _who(ev, self.remote) is not None:
                        out.append(ev)
            elif sql == CONSUME_SQL:
                for row in rows:
                    if row[1] in self.remote and row[2] == self.run_id:
                        out.append(MessageConsumed(message_id=str(row[0]), creature=row[1],
                                                   ts=float(row[3])))
        return out

    async def _watch_waiting(self) -> None:
        """Tell the session when a remote creature's message has waited ``wait`` seconds
        with no sign of the creature (no worker runs it, or the one that did died)."""
        while True:
            await anyio.sleep(min(0.5, self.wait / 4))
            now = time.time()
            for c in sorted(self.remote - self.told):
                rows = self.log.query(_OLDEST_SQL, (self.run_id, c, c))
                oldest = rows[0][0] if rows else None
                if oldest is None:
                    continue
                since = max(float(oldest), self.last_seen.get(c, 0.0))
                # in a turn, a worker may be quiet a while (a long tool call): only past
                # the ack wait, when the broker would hand the message on, is it told
                busy = c in self.in_turn
                if now - since < self.wait + (self.ack_wait if busy else 0.0):
                    continue
                self.told.add(c)
                start = (f"start one: terrarium worker {self.team_path} --broker URL "
                         f"--sessions --creatures {c}")
                message = (
                    f"{c}'s worker has said nothing for {now - since:.0f} s in its turn: if it "
                    f"died, another worker does the turn again ({start})" if busy else
                    f"{c} runs in a worker, and no worker has taken its message for "
                    f"{now - float(oldest):.0f} s; {start} (a worker that died in a turn is "
                    "replaced the same way: the turn is done again)")
                self.emit(CreatureWaiting(creature=c, seconds=round(now - float(oldest), 1),
                                          message=message))


def _who(ev: Event, remote: frozenset[str]) -> str | None:
    """The remote creature ``ev`` is about (its creature, sender or receiver), or None."""
    for attr in ("creature", "sender", "receiver"):
        name = getattr(ev, attr, None)
        if isinstance(name, str) and name.split("/", 1)[0] in remote:
            return name.split("/", 1)[0]
    return None


async def import_history(transport: NatsTransport, log: DurableLog, run_id: str,
                         creatures: Collection[str]) -> int:
    """Copy ``creatures``' saved conversations (the two newest of each, as the log keeps,
    with the parts of the conversation they reach) and consumptions in run ``run_id`` from
    its log stream into ``log`` (not mirrored again); returns how many conversations.
    Whoever ran a creature before (the server, a worker that died), its newest conversation
    whose message was consumed is restored."""
    from terrarium.channels.nats.sessions import log_batches

    ensure_session_tables(log)
    names = frozenset(creatures)
    newest: dict[str, list[list[Any]]] = {}
    parts: dict[tuple[str, str], list[list[Any]]] = {}  # (creature, generation) -> its parts
    consumed: list[list[Any]] = []
    async for _seq, _src, ops in log_batches(transport.js, run_id, follow=False):
        for sql, rows in ops:
            if sql == HISTORY_SQL:
                for row in rows:
                    if row[0] == run_id and row[1] in names:
                        kept = [r for r in newest.get(row[1], []) if r[2] != row[2]]
                        newest[row[1]] = [*kept, row][-2:]
            elif sql == PART_SQL:
                for row in rows:
                    if row[0] == run_id and row[1] in names:
                        parts.setdefault((row[1], row[2]), []).append(row)
            elif sql == CONSUME_SQL:
                consumed.extend(r for r in rows if r[2] == run_id and r[1] in names)
    histories = [r for rows in newest.values() for r in rows]
    reached = {(r[1], _generation(r[4])) for r in histories}
    needed = [p for key, rows in parts.items() if key in reached for p in rows]
    log.apply_mirrored([(PART_SQL, needed), (HISTORY_SQL, histories), (CONSUME_SQL, consumed)])
    return len(histories)


def _generation(conversation: str) -> str | None:
    """The generation a ``histories`` row's conversation reaches (None: a whole list)."""
    ref = json.loads(conversation)
    return ref.get("gen") if isinstance(ref, dict) else None
