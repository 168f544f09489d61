"""A session creature's saved conversation: appended turn by turn, never rewritten whole.

After every turn of a session each creature's conversation is saved beside the message the
turn consumed (``histories``: one row per turn's message, the log keeps each creature's two
newest; see runtime/sessions.py for why two). The row used to hold the whole conversation
as JSON, so a turn's save wrote (and SQLite copied into the WAL) the whole session's
history: a session of 500 turns wrote a thousand entries per turn. Now the entries live in
``history_parts``, each turn's new ones in one row, and a ``histories`` row says how many
of them are the conversation: ``{"gen": G, "n": N}``, the first N entries of the sequence
``G`` (a *generation*: the entries one process appended for the creature, in order). A
turn's save writes what the turn added and a row of a few bytes, whatever the session's
length.

What a turn did to the conversation is found by comparing it with what was saved last
(``SavedConversation``, per creature, in the process that saves): the saved entries still
its start (the usual case: the turn only appended) → the new ones are appended; anything
else (``history_turns`` dropped the oldest entries, whose conversation that setting keeps
short) → the row holds the whole conversation as before, and the next append starts a new
generation with it. A generation's parts go (in the same transaction) once no kept row
reaches them. Each process starts a generation of its own at its first save (a resumed
run, a worker taking a creature over), so no process writes over parts another wrote; a
save whose transaction failed forgets what it saved (``forget``), so the next writes the
conversation whole again. Rows of older logs (a JSON list) are read as they are.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from terrarium.errors import RuntimeFailure
from terrarium.prompt.tail import Turn

if TYPE_CHECKING:
    from terrarium.controller.loop import Controller

__all__ = ["ASK_KEY", "CLEAR_SQL", "DROP_SQL", "HISTORY_SQL", "HISTORY_TABLES", "PART_SQL",
           "SavedConversation", "history_ops", "newest_conversation", "restore_history",
           "stored_conversation"]

HISTORY_TABLES = (
    "CREATE TABLE IF NOT EXISTS histories(run_id TEXT NOT NULL, creature TEXT NOT NULL,"
    " message_id TEXT NOT NULL, turns INTEGER NOT NULL, conversation TEXT NOT NULL,"
    " ts REAL NOT NULL, PRIMARY KEY(run_id, creature, message_id)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS history_parts(run_id TEXT NOT NULL, creature TEXT NOT NULL,"
    " gen TEXT NOT NULL, pos INTEGER NOT NULL, stop INTEGER NOT NULL, turns TEXT NOT NULL,"
    " PRIMARY KEY(run_id, creature, gen, pos)) WITHOUT ROWID",
)
HISTORY_SQL = ("INSERT OR REPLACE INTO histories(run_id, creature, message_id, turns,"
               " conversation, ts) VALUES (?,?,?,?,?,?)")
PART_SQL = ("INSERT OR REPLACE INTO history_parts(run_id, creature, gen, pos, stop, turns)"
            " VALUES (?,?,?,?,?,?)")
# keep the two newest conversations per creature: the newest may belong to a message the
# crash left unconsumed, and then the one before it is the one to restore
_PRUNE_SQL = ("DELETE FROM histories WHERE run_id=? AND creature=? AND message_id NOT IN"
              " (SELECT message_id FROM histories WHERE run_id=? AND creature=?"
              " ORDER BY ts DESC LIMIT 2)")
# ... with the parts of other generations no row left reaches
_ORPHANS_SQL = ("DELETE FROM history_parts WHERE run_id=? AND creature=? AND gen<>? AND gen"
                " NOT IN (SELECT json_extract(conversation, '$.gen') FROM histories WHERE"
                " run_id=? AND creature=? AND json_type(conversation)='object')")
# ... by its key, when the process knows which two the log holds (it saved them): a
# lookup, where the prune above reads and sorts the creature's rows on every turn
DROP_SQL = "DELETE FROM histories WHERE run_id=? AND creature=? AND message_id=?"
# the parts of a generation no kept row reaches any more
CLEAR_SQL = "DELETE FROM history_parts WHERE run_id=? AND creature=? AND gen=?"
ASK_KEY = "-"  # a turn over no channel message (a single creature's ``ask``): nothing to consume

Query = Callable[[str, tuple[Any, ...]], Sequence[tuple[Any, ...]]]


def _dump(turns: Sequence[Turn]) -> str:
    """Entries as their rows store them (compact JSON, UTF-8 as is): orjson; what orjson
    refuses (a lone surrogate) takes json."""
    rows = [[t.role, t.content, t.name, t.tool_call_id] for t in turns]
    try:
        return orjson.dumps(rows).decode()
    except orjson.JSONEncodeError:
        return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


class SavedConversation:
    """What this process saved of one creature's conversation: the entries as last saved,
    the generation holding them (none: saved inline), and the rows it wrote."""

    __slots__ = ("gen", "kept", "turns")

    def __init__(self) -> None:
        self.gen = ""  # the generation holding ``turns`` ("": none; the next append starts one)
        self.turns: list[Turn] = []  # the conversation as last saved
        self.kept: list[tuple[str, str]] = []  # rows written: (message key, gen), oldest first

    def forget(self) -> None:
        """A save that did not commit: the next writes the conversation whole again."""
        self.gen = ""
        self.turns = []
        self.kept.clear()

    def ops(self, run_id: str, creature: str, key: str, ctl: Controller
            ) -> list[tuple[str, list[tuple[Any, ...]]]]:
        """The writes that save ``ctl``'s conversation after the turn over ``key``."""
        conv = ctl.conversation
        saved = self.turns
        n = len(saved)
        ops: list[tuple[str, list[tuple[Any, ...]]]] = []
        if conv[:n] == saved:  # the turn appended (a comparison of pointers, in C)
            if not self.gen:  # the first save, or the first append after a rewrite
                self.gen, n = os.urandom(8).hex(), 0
            if len(conv) > n:
                ops.append((PART_SQL, [(run_id, creature, self.gen, n, len(conv),
                                        _dump(conv[n:]))]))
            data = f'{{"gen":"{self.gen}","n":{len(conv)}}}'
            saved.extend(conv[len(saved):])
        else:  # rewritten (``history_turns`` dropped its oldest entries): saved whole
            self.gen, data, self.turns = "", _dump(conv), list(conv)
        ops.append((HISTORY_SQL, [(run_id, creature, key, ctl.turns, data, time.time())]))
        kept = self.kept
        known = [k for k, _ in kept]
        if key in known:  # the same row again: no row more
            del kept[known.index(key)]
        elif len(kept) == 2:  # the log holds these two: the older goes
            old, gen = kept.pop(0)
            ops.append((DROP_SQL, [(run_id, creature, old)]))
            if gen and gen != kept[0][1] and gen != self.gen:  # and its parts, if no row's
                ops.append((CLEAR_SQL, [(run_id, creature, gen)]))
        else:  # which rows the log holds is not known here: keep its two newest
            ops.append((_PRUNE_SQL, [(run_id, creature, run_id, creature)]))
            ops.append((_ORPHANS_SQL, [(run_id, creature, self.gen, run_id, creature)]))
        kept.append((key, self.gen))
        return ops


def history_ops(run_id: str, creature: str, message_id: str | None, ctl: Controller,
                saved: SavedConversation | None = None
                ) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The log writes that save ``ctl``'s conversation after the turn over ``message_id``
    (``saved``: what this process saved of it before; none: a save of its own)."""
    return (saved or SavedConversation()).ops(run_id, creature, message_id or ASK_KEY, ctl)


def stored_conversation(query: Query, run_id: str, creature: str, data: str
                        ) -> list[list[Any]]:
    """The entries (``[role, content, name, tool_call_id]``) a ``histories`` row's
    ``conversation`` stands for: the first ``n`` of its generation's parts, or the list
    itself (a rewritten conversation; every row of older logs)."""
    ref = json.loads(data)
    if isinstance(ref, list):
        return ref
    gen, n = ref["gen"], int(ref["n"])
    rows = query("SELECT pos, turns FROM history_parts WHERE run_id=? AND creature=?"
                 " AND gen=? AND pos<? ORDER BY pos", (run_id, creature, gen, n))
    out: list[list[Any]] = []
    for pos, turns in rows:
        if pos != len(out):
            break
        out.extend(json.loads(turns))
    if len(out) < n:
        raise RuntimeFailure(
            f"The saved conversation of {creature} in run {run_id} is incomplete: the log "
            f"has its first {len(out)} entries, its row needs {n}.")
    return out[:n]


def newest_conversation(query: Query, run_id: str, creature: str) -> list[list[Any]]:
    """The entries of ``creature``'s newest saved conversation in ``run_id`` (consumed or
    not; empty when there is none): what a test or a tool reads."""
    rows = query("SELECT conversation FROM histories WHERE run_id=? AND creature=?"
                 " ORDER BY ts DESC LIMIT 1", (run_id, creature))
    return stored_conversation(query, run_id, creature, rows[0][0]) if rows else []


def restore_history(log: Any, run_id: str, creature: str, ctl: Controller) -> bool:
    """Give ``ctl`` the newest saved conversation whose turn's message was consumed
    (``log``: a ``DurableLog``)."""
    rows = log.query(
        "SELECT h.message_id, h.turns, h.conversation FROM histories h WHERE h.run_id=?"
        " AND h.creature=? AND (h.message_id=? OR EXISTS (SELECT 1 FROM consumptions c"
        " WHERE c.message_id=h.message_id AND c.receiver=?)) ORDER BY h.ts DESC LIMIT 1",
        (run_id, creature, ASK_KEY, creature))
    if not rows:
        return False
    _, turns, data = rows[0]
    entries = stored_conversation(log.query, run_id, creature, data)
    ctl.conversation = [Turn(role=r[0], content=r[1], name=r[2], tool_call_id=r[3])
                        for r in entries]
    ctl.turns = int(turns)
    return True
