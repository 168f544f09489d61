"""Sessions: one conversation with a team that outlives the process that runs it.

A session is a run in the durable log that is resumed each time the session is loaded
(``RuntimeOptions(resume=run_id, keep_history=True)``): the log redelivers its unconsumed
messages exactly once, its memory store lives in the run's folder, and each creature's
conversation is saved after every turn beside the message that turn consumed. On load a
creature gets the newest saved conversation whose message is marked consumed: a crash
between the save and the consumption leaves the message to be redelivered, and the
conversation from before it, so no turn is heard twice or lost. How a conversation is
saved (each turn appends what it added): runtime/history.py.

The tables live in the run log's SQLite file (``runs/terrarium.sqlite3``), next to the runs
they point at. The serve layer adds its event sequence (``session_events``) here too.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from terrarium.channels.log import DurableLog
from terrarium.errors import RuntimeFailure
from terrarium.runtime.history import (
    ASK_KEY,
    DROP_SQL,
    HISTORY_SQL,
    HISTORY_TABLES,
    history_ops,
    restore_history,
)

if TYPE_CHECKING:
    from terrarium.config import Team

__all__ = ["ASK_KEY", "DROP_SQL", "HISTORY_SQL", "SessionInfo", "SessionStore",
           "ensure_session_tables", "history_ops", "open_named_session", "restore_history"]

_TABLES = (
    "CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, name TEXT, run_id TEXT NOT NULL,"
    " terrarium TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,"
    " turns INTEGER NOT NULL DEFAULT 0)",
    "CREATE UNIQUE INDEX IF NOT EXISTS sessions_name ON sessions(terrarium, name)"
    " WHERE name IS NOT NULL",
    *HISTORY_TABLES,
    "CREATE TABLE IF NOT EXISTS session_events(session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " kind TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY(session_id, seq)) WITHOUT ROWID",
)


def ensure_session_tables(log: DurableLog) -> None:
    """Create the session tables in ``log``'s file (if they are not there yet)."""
    log.write_batch([(sql, [()]) for sql in _TABLES])


class SessionInfo(BaseModel):
    """One stored session: its id (128 random bits, 32 hex digits) and the run it resumes."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str | None
    run_id: str
    terrarium: str
    created: float
    updated: float
    turns: int = 0


_COLS = "id, name, run_id, terrarium, created, updated, turns"


def _info(r: tuple[Any, ...]) -> SessionInfo:
    return SessionInfo(id=r[0], name=r[1], run_id=r[2], terrarium=r[3], created=r[4],
                       updated=r[5], turns=r[6])


def new_session_id() -> str:
    """128 random bits as 32 hex digits: unguessable, so the id itself is the handle."""
    return secrets.token_hex(16)


class SessionStore:
    """The sessions of one log file: create, find, list, count turns, delete."""

    def __init__(self, log: DurableLog) -> None:
        self.log = log
        ensure_session_tables(log)

    def create(self, team: Team, name: str | None = None) -> SessionInfo:
        if name is not None and self.by_name(team.name, name) is not None:
            raise RuntimeFailure(f"there is already a session named {name!r}")
        run_id = self.log.start_run(team.name, team.path)
        self.log.set_run_status(run_id, "completed")  # nothing ran yet; loading resumes it
        now = time.time()
        info = SessionInfo(id=new_session_id(), name=name, run_id=run_id,
                           terrarium=team.name, created=now, updated=now)
        try:
            self.log.write_batch([(f"INSERT INTO sessions({_COLS}) VALUES (?,?,?,?,?,?,?)",
                                   [(info.id, name, run_id, team.name, now, now, 0)])])
        except sqlite3.IntegrityError:  # another process named one so since the look above
            raise RuntimeFailure(f"there is already a session named {name!r}") from None
        return info

    def get(self, session_id: str) -> SessionInfo | None:
        rows = self.log.query(f"SELECT {_COLS} FROM sessions WHERE id=?", (session_id,))
        return _info(rows[0]) if rows else None

    def by_name(self, terrarium: str, name: str) -> SessionInfo | None:
        rows = self.log.query(f"SELECT {_COLS} FROM sessions WHERE terrarium=? AND name=?",
                              (terrarium, name))
        return _info(rows[0]) if rows else None

    def list(self, terrarium: str | None = None) -> list[SessionInfo]:
        if terrarium is None:
            rows = self.log.query(f"SELECT {_COLS} FROM sessions ORDER BY created")
        else:
            rows = self.log.query(f"SELECT {_COLS} FROM sessions WHERE terrarium=?"
                                  " ORDER BY created", (terrarium,))
        return [_info(r) for r in rows]

    def count(self) -> int:
        return int(self.log.query("SELECT count(*) FROM sessions")[0][0])

    def add_turns(self, counts: Mapping[str, int]) -> None:
        """Add finished turns to sessions (one transaction for many) and touch them."""
        now = time.time()
        self.log.write_batch([("UPDATE sessions SET turns=turns+?, updated=? WHERE id=?",
                               [(n, now, sid) for sid, n in counts.items()])])

    def delete(self, session_id: str) -> bool:
        info = self.get(session_id)
        if info is None:
            return False
        self.log.write_batch([
            ("DELETE FROM sessions WHERE id=?", [(session_id,)]),
            ("DELETE FROM session_events WHERE session_id=?", [(session_id,)]),
            ("DELETE FROM histories WHERE run_id=?", [(info.run_id,)]),
            ("DELETE FROM history_parts WHERE run_id=?", [(info.run_id,)]),
        ])
        return True


def open_named_session(log_path: Path, team: Team, name: str) -> str:
    """The run of session ``name`` of ``team`` in the log at ``log_path``, made if new
    (``terrarium run --session NAME``); resume it with ``keep_history``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with DurableLog(log_path) as log:
        store = SessionStore(log)
        info = store.by_name(team.name, name) or store.create(team, name)
        return info.run_id
