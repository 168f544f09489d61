"""A run's log as mirrored write batches: what a follower of a distributed run hands on.

Every process of a run mirrors its SQLite writes (``(sql, rows)`` batches, in the order
each committed them; ``NatsTransport.mirror``). A watcher turns one back into the typed
events among its writes (:func:`parse_batch`) and replays the writes into a local copy of
the log (:func:`apply_ops`). Nothing here knows the broker: ``channels/nats/follow.py``
reads the batches off it; the monitor only takes them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from terrarium.channels.log import EVENT_SQL, replay_rows
from terrarium.events import Event, event_from_dict

__all__ = ["LogBatch", "Ops", "apply_ops", "parse_batch"]

_STATUS_SQL = "UPDATE runs SET status="

Ops = list[tuple[str, list[list[Any]]]]


@dataclass(slots=True)
class LogBatch:
    """One mirrored write batch of the run: its raw writes and the events among them.

    ``ended`` is set (the run's final status) on the last batch the follower yields.
    """

    ops: Ops = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    ended: str | None = None


def parse_batch(data: bytes, run_id: str) -> tuple[LogBatch, str | None]:
    """The batch in one stream message, and the final status if it records the run's end."""
    try:
        ops: Ops = [(str(sql), rows) for sql, rows in json.loads(data)["ops"]]
    except (ValueError, KeyError, TypeError):
        return LogBatch(), None  # not a log record this version understands
    batch = LogBatch(ops=ops)
    ended: str | None = None
    for sql, rows in ops:
        if sql == EVENT_SQL:
            for row in rows:
                try:
                    batch.events.append(event_from_dict(json.loads(row[4])))
                except (ValueError, KeyError, TypeError, IndexError):
                    continue  # a kind this version does not know
        elif sql.startswith(_STATUS_SQL):
            for row in rows:
                status, _ended, rid = row
                if rid == run_id and status != "running":
                    ended = str(status)
    return batch, ended


def apply_ops(conn: sqlite3.Connection, ops: Sequence[tuple[str, Sequence[Sequence[Any]]]]
              ) -> None:
    """Replay mirrored writes into a local copy of the log (a row seen twice is kept once)."""
    conn.execute("BEGIN")
    try:
        replay_rows(conn, ops)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
