"""The durable log: one SQLite file (WAL) holding runs, messages, consumption, refusals,
turns and events, so a run can be inspected (``timeline``) and resumed (``unconsumed``).

The connection is shared between the event loop and the writer thread, guarded by a lock.
Writes that must happen before a delivery go through :class:`terrarium.channels.writer.LogWriter`,
which groups concurrent senders into one transaction. The schema, the insert statements
and the rows they take are in ``log_rows.py`` (re-exported here).
"""

from __future__ import annotations

import json
import marshal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.log_rows import (
    BATCH_KIND,
    CONSUME_SQL,
    EFFECT_SQL,
    EVENT_SQL,
    JOB_KINDS,
    JOB_KINDS_WHERE,
    MESSAGE_SQL,
    NUMBERED_EVENT_SQL,
    REFUSAL_SQL,
    SCHEMA,
    SEND_KEY,
    TURN_SQL,
    RefusalRecord,
    RunInfo,
    TurnRecord,
    event_row,
    message_row,
    payloads_back,
    refusal_row,
    replay_rows,
    sent_json,
    turn_row,
    unbatched,
    with_payload,
)
from terrarium.channels.timeline import TimelineEntry, format_timeline, run_timeline
from terrarium.errors import RuntimeFailure
from terrarium.events import Event, RunStatus, event_from_dict
from terrarium.secrecy import may_need_redaction, redact


class DurableLog:
    """An SQLite event log in WAL mode with ``synchronous=NORMAL``.

    NORMAL in WAL mode keeps the database consistent across a process crash (what resume
    needs) and skips the fsync per commit; a power loss may lose the last transactions.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL") -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # told every committed write as (sql, rows) pairs: a distributed run mirrors its
        # log to the broker through it (may be called from the writer thread)
        self.on_write: Callable[[Sequence[tuple[str, Sequence[tuple[Any, ...]]]]], None] | None
        self.on_write = None
        try:
            self._conn = sqlite3.connect(
                str(self.path), check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous}")
            self._conn.executescript(SCHEMA)
            for table, col, kind in (("messages", "send_key", "TEXT"),
                                     ("events", "seq", "INTEGER")):
                cols = {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}
                if col not in cols:
                    self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {kind}")
            self._conn.executescript(SEND_KEY)
        except sqlite3.Error as e:
            what = ("it is a folder" if self.path.is_dir() else
                    "it is not a terrarium run log" if self.path.exists() else None)
            raise RuntimeFailure(
                f"The event log {self.path} could not be opened: {e}.",
                suggestion=(f"{what}: move it away, or give another --runs-dir" if what else
                            f"check that {self.path.parent} is a folder you may write to")
            ) from e

    # -- writing -----------------------------------------------------------------------

    def write_batch(self, ops: Iterable[tuple[str, Sequence[tuple[Any, ...]]]]) -> None:
        """Run every ``(sql, rows)`` pair in ONE transaction (committed before returning).

        Every text value is redacted first (``terrarium.secrecy``): a key a command printed,
        or a URL's password, never reaches the file (nor the broker's mirror of it)."""
        ops = _redacted_ops(ops)
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                for sql, rows in ops:
                    conn.executemany(sql, rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if self.on_write is not None:
                self.on_write(ops)  # type: ignore[arg-type]

    def apply_mirrored(self, ops: Iterable[tuple[str, Sequence[Sequence[Any]]]],
                       extra: Iterable[tuple[str, Sequence[tuple[Any, ...]]]] = ()) -> None:
        """Replay writes another process of the run mirrored (a row already here is kept
        once), plus ``extra`` writes, in ONE transaction; not mirrored again (``on_write``
        is not told: they came from the broker)."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                replay_rows(conn, ops)
                for sql, rows in extra:
                    conn.executemany(sql, rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _write(self, sql: str, row: tuple[Any, ...]) -> int:
        row = _redacted(row)
        with self._lock:
            cur = self._conn.execute(sql, row)
            if self.on_write is not None:
                self.on_write([(sql, [row])])
            return cur.rowcount

    def start_run(
        self, terrarium: str, path: str | Path | None = None, *, run_id: str | None = None
    ) -> str:
        """Record a new run and return its id (time-ordered, like message ids)."""
        rid = run_id or new_message_id()
        self._write(
            "INSERT INTO runs(run_id, terrarium, path, started, status) VALUES (?,?,?,?,?)",
            (rid, terrarium, str(path) if path is not None else None, time.time(), "running"),
        )
        return rid

    def set_run_status(self, run_id: str, status: RunStatus) -> None:
        ended = None if status == "running" else time.time()
        self._write("UPDATE runs SET status=?, ended=? WHERE run_id=?", (status, ended, run_id))

    def record_message(self, run_id: str, env: Envelope, receivers: Sequence[str]) -> None:
        self._write(MESSAGE_SQL, message_row(run_id, env, receivers))

    def mark_consumed(self, run_id: str, message_id: str, receiver: str) -> bool:
        """Idempotent; True only the first time this receiver consumes this message."""
        return self._write(CONSUME_SQL, (message_id, receiver, run_id, time.time())) == 1

    def record_refusal(
        self, run_id: str, sender: str, channel: str, reason: str, payload: Any = None
    ) -> None:
        self._write(REFUSAL_SQL, refusal_row(run_id, sender, channel, reason, payload))

    def record_turn(self, run_id: str, turn: TurnRecord) -> None:
        self._write(TURN_SQL, turn_row(run_id, turn))

    def record_event(self, run_id: str, event: Event) -> None:
        self._write(EVENT_SQL, event_row(run_id, event))

    # -- reading -----------------------------------------------------------------------

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read rows of tables other layers keep in this file (sessions, histories)."""
        return self._query(sql, params)

    def with_payloads(self, datas: Sequence[str]) -> list[str]:
        """Events-table texts whole again: a ``message_sent`` row's payload is kept once,
        in its message's row (see ``log_rows.payloads_back``)."""
        return payloads_back(datas, self._payloads)

    def _payloads(self, ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            out.update(self._query(f"SELECT id, payload FROM messages WHERE id IN "
                                   f"({','.join('?' * len(part))})", tuple(part)))
        return out

    def run(self, run_id: str) -> RunInfo:
        rows = self._query(
            "SELECT run_id, terrarium, path, started, ended, status FROM runs WHERE run_id=?",
            (run_id,),
        )
        if not rows:
            like = [r[0] for r in self._query("SELECT run_id FROM runs WHERE instr(run_id, ?) "
                                              "ORDER BY started DESC LIMIT 3", (run_id,))]
            raise RuntimeFailure(
                f"There is no run {run_id!r} in the event log {self.path}.",
                suggestion=(f"a run id is given whole; did you mean {' or '.join(like)}?"
                            if like and run_id.strip() else
                            f"`terrarium log --runs-dir {self.path.parent}` lists the runs"))
        return _run_info(rows[0])

    def runs(self) -> list[RunInfo]:
        rows = self._query(
            "SELECT run_id, terrarium, path, started, ended, status FROM runs ORDER BY started"
        )
        return [_run_info(r) for r in rows]

    def run_pids(self) -> dict[str, int]:
        """Each run's process id as its last ``run_started`` event recorded it (0: none),
        so a list of runs can tell a ``running`` run whose process is gone."""
        out: dict[str, int] = {}
        for run_id, data in self._query(
            "SELECT run_id, data FROM events WHERE kind='run_started' ORDER BY id"
        ):
            out[run_id] = int(json.loads(data).get("pid") or 0)
        return out

    def sent_with_key(
        self, run_id: str, send_key: str
    ) -> tuple[Envelope, tuple[str, ...]] | None:
        """The message a send with this deterministic key already logged, if any."""
        rows = self._query(
            f"SELECT {_ENV_COLS} FROM messages WHERE run_id=? AND send_key=?", (run_id, send_key)
        )
        if not rows:
            return None
        return _envelope(rows[0]), tuple(json.loads(rows[0][-1]))

    def record_effect(
        self, run_id: str, key: str, creature: str, tool: str, ok: bool, result: str
    ) -> None:
        """Keep a side-effecting tool call's result under its deterministic key (first wins)."""
        self._write(EFFECT_SQL, (run_id, key, creature, tool, int(ok), result, time.time()))

    def effect(self, run_id: str, key: str) -> tuple[bool, str] | None:
        """The recorded ``(ok, result)`` of the tool call with this key, if it completed."""
        rows = self._query("SELECT ok, result FROM effects WHERE run_id=? AND key=?",
                           (run_id, key))
        return (bool(rows[0][0]), rows[0][1]) if rows else None

    def has_message(self, message_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM messages WHERE id=?", (message_id,)))

    def message(self, message_id: str) -> tuple[Envelope, tuple[str, ...]]:
        rows = self._query(f"SELECT {_ENV_COLS} FROM messages WHERE id=?", (message_id,))
        if not rows:
            raise RuntimeFailure(f"There is no message {message_id!r} in the event log.")
        return _envelope(rows[0]), tuple(json.loads(rows[0][-1]))

    def messages(self, run_id: str) -> list[tuple[Envelope, tuple[str, ...]]]:
        rows = self._query(
            f"SELECT {_ENV_COLS} FROM messages WHERE run_id=? ORDER BY id", (run_id,)
        )
        return [(_envelope(r), tuple(json.loads(r[-1]))) for r in rows]

    def consumed_ids(self, run_id: str, receiver: str) -> set[str]:
        rows = self._query(
            "SELECT message_id FROM consumptions WHERE run_id=? AND receiver=?",
            (run_id, receiver),
        )
        return {r[0] for r in rows}

    def consumption_count(self, run_id: str) -> int:
        return self._query("SELECT count(*) FROM consumptions WHERE run_id=?", (run_id,))[0][0]

    def unconsumed(self, run_id: str, receiver: str) -> list[Envelope]:
        """Messages meant for ``receiver`` it has not consumed, oldest first (for resume)."""
        rows = self._query(
            f"SELECT {_ENV_COLS_M} FROM messages m, json_each(m.receivers) r"
            " WHERE m.run_id=? AND r.value=? AND NOT EXISTS (SELECT 1 FROM consumptions c"
            " WHERE c.message_id=m.id AND c.receiver=?) ORDER BY m.id",
            (run_id, receiver, receiver),
        )
        return [_envelope(r) for r in rows]

    def refusals(self, run_id: str) -> list[RefusalRecord]:
        rows = self._query(
            "SELECT ts, sender, channel, reason, payload FROM refusals WHERE run_id=? ORDER BY id",
            (run_id,),
        )
        return [RefusalRecord(ts=r[0], sender=r[1], channel=r[2], reason=r[3],
                              payload=json.loads(r[4]) if r[4] else None) for r in rows]

    def turns(self, run_id: str) -> list[TurnRecord]:
        rows = self._query(
            "SELECT creature, turn_index, prefix_hash, prompt_tokens, cached_tokens,"
            " completion_tokens, calls, outputs, error, started, ended FROM turns"
            " WHERE run_id=? ORDER BY id",
            (run_id,),
        )
        return [TurnRecord(creature=r[0], turn_index=r[1], prefix_hash=r[2],
                           prompt_tokens=r[3] or 0, cached_tokens=r[4] or 0,
                           completion_tokens=r[5] or 0, calls=json.loads(r[6] or "[]"),
                           outputs=json.loads(r[7] or "{}"), error=r[8], started=r[9],
                           ended=r[10]) for r in rows]

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The run's logged events in their stored JSON form, in log order; ``kinds``:
        only those (rows written as ``generic`` too, which may stand for any kind)."""
        if kinds is None:
            rows = self._query("SELECT kind, data FROM events WHERE run_id=? ORDER BY id",
                               (run_id,))
        else:
            marks = ",".join("?" * (len(kinds) + 2))
            # the jobs' kinds through their partial index (its WHERE, word for word, lets
            # SQLite use it; they are never in a batch row); any other kind by the run's
            # rows, batch rows taken apart and kept by kind
            jobs = set(kinds) <= JOB_KINDS
            source = "events INDEXED BY events_jobs" if jobs else "events"
            also = f"{JOB_KINDS_WHERE} AND " if jobs else ""
            rows = self._query(f"SELECT kind, data FROM {source} WHERE run_id=? AND {also}kind"
                               f" IN ({marks}) ORDER BY id",
                               (run_id, *kinds, "generic", BATCH_KIND))
        texts = [r[1] for r in unbatched(rows, 0, 1)
                 if kinds is None or r[0] == "generic" or r[0] in kinds]
        return [json.loads(d) for d in self.with_payloads(texts)]

    def scan(self, run_id: str, page: int = 256) -> Iterator[tuple[str, str]]:
        """The run's events as ``(kind, text)`` in log order, read ``page`` rows at a time
        (the lock held for one page's query only): a long run is never in memory whole,
        and the writer is not kept waiting. A ``message_sent`` text is without its payload
        (``events`` puts it back). May be iterated in a worker thread."""
        last = 0
        while True:
            rows = self._query("SELECT id, kind, data FROM events WHERE run_id=? AND id>?"
                               " ORDER BY id LIMIT ?", (run_id, last, page))
            if not rows:
                return
            last = rows[-1][0]
            for _, kind, text in unbatched(rows, 1, 2):
                yield kind, text
            if len(rows) < page:
                return

    def numbered(self, run_id: str) -> list[tuple[int, str, str]]:
        """A served run's numbered events as ``(seq, kind, text)``, in order, whole (batch
        rows taken apart, payloads back): what its clients were streamed."""
        rows = unbatched(self._query("SELECT seq, kind, data FROM events WHERE run_id=? AND"
                                     " seq IS NOT NULL ORDER BY seq", (run_id,)), 1, 2, 0)
        datas = self.with_payloads([r[2] for r in rows])
        return [(int(r[0]), r[1], d) for r, d in zip(rows, datas, strict=True)]

    def typed_events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]:
        """The run's logged events rebuilt by type, in log order (what replay folds);
        ``kinds``: only those (a resumed run's look for its jobs reads no turn's events).

        Rows of kinds this version does not know are skipped; rows a version before typed
        events wrote as ``generic`` are read as the typed event they stood for.
        """
        out: list[Event] = []
        for data in self.events(run_id, kinds):
            if data.get("kind") == "generic":
                data = _untyped(data)
            try:
                out.append(event_from_dict(data))
            except ValueError:
                continue
        return out

    def timeline(self, run_id: str) -> list[TimelineEntry]:
        """Everything that happened in a run, in time order (messages, consumption,
        refusals, turns, events)."""
        return run_timeline(self, run_id)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> DurableLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_ENV_COLS = "id, channel, sender, schema_name, payload, ts, reply_to, correlation_id, receivers"
_ENV_COLS_M = ", ".join(f"m.{c.strip()}" for c in _ENV_COLS.split(","))


def _redacted(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """``row`` with secrets masked in each of its text values."""
    return _redacted_rows((row,))[0]


def _redacted_rows(rows: Sequence[tuple[Any, ...]]) -> Sequence[tuple[Any, ...]]:
    """``rows`` with secrets masked in each of their text values.

    First one test over all their values at once: ``marshal`` writes every text as its
    UTF-8 bytes (numbers in binary, nothing formatted) in one C call, so a secret or a
    URL's credentials in any value is in those bytes; a false alarm only costs the scan.
    The usual batch holds none and goes as it is. Scanning value by value cost a logged
    send a fifth of its time (issue 28)."""
    if not isinstance(rows, (list, tuple)):
        rows = list(rows)  # read twice below
    try:
        if not may_need_redaction(marshal.dumps(rows)):
            return rows
    except ValueError:  # a value marshal does not write (a str subclass): scan them all
        pass
    return [tuple(redact(v) if isinstance(v, str) else v for v in row) for row in rows]


def _redacted_ops(ops: Iterable[tuple[str, Sequence[tuple[Any, ...]]]]
                  ) -> list[tuple[str, Sequence[tuple[Any, ...]]]]:
    """``write_batch``'s ops with secrets masked in their rows: one test over every row of
    the batch at once (a turn's end holds six statements), each op's scanned only then."""
    ops = [(sql, rows if isinstance(rows, (list, tuple)) else list(rows)) for sql, rows in ops]
    try:
        if not may_need_redaction(marshal.dumps([rows for _, rows in ops])):
            return ops
    except ValueError:  # a value marshal does not write (a str subclass): op by op
        pass
    return [(sql, _redacted_rows(rows)) for sql, rows in ops]


def _envelope(row: tuple[Any, ...]) -> Envelope:
    return Envelope(
        id=row[0],
        channel=row[1],
        sender=row[2],
        schema_name=row[3],
        payload=json.loads(row[4]),
        ts=row[5],
        reply_to=row[6],
        correlation_id=row[7],
    )


def _run_info(r: tuple[Any, ...]) -> RunInfo:
    return RunInfo(run_id=r[0], terrarium=r[1], path=r[2], started=r[3], ended=r[4], status=r[5])


def _untyped(d: dict[str, Any]) -> dict[str, Any]:
    """An old ``generic`` row (``name`` + ``data``) in the typed form of the same event."""
    name = str(d.get("name", ""))
    data = d.get("data") if isinstance(d.get("data"), dict) else {}
    base = {"ts": d.get("ts", 0.0), "creature": d.get("creature")}
    if name == "transcript":
        entry = {k: data[k] for k in ("kind", "text", "turn", "name", "detail") if k in data}
        return {**base, "kind": "transcript", "entry": {"ts": base["ts"], **entry}}
    kind = name.removeprefix("voice.")
    return {**data, **base, "kind": kind}


__all__ = [
    "CONSUME_SQL",
    "EFFECT_SQL",
    "EVENT_SQL",
    "MESSAGE_SQL",
    "NUMBERED_EVENT_SQL",
    "REFUSAL_SQL",
    "TURN_SQL",
    "DurableLog",
    "RefusalRecord",
    "RunInfo",
    "RunStatus",
    "TimelineEntry",
    "TurnRecord",
    "event_row",
    "format_timeline",
    "message_row",
    "payloads_back",
    "refusal_row",
    "replay_rows",
    "sent_json",
    "turn_row",
    "with_payload",
]
