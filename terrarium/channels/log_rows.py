"""The durable log's schema, its insert statements and the rows and records they take:
what every writer of the log (the log itself, the batching writer, a replayed mirror of
another process's writes) agrees on, apart from the log's reading and writing code.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from terrarium.channels.envelope import Envelope
from terrarium.events import Event, MessageSent, RunStatus, event_json, json_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs(
  run_id TEXT PRIMARY KEY, terrarium TEXT NOT NULL, path TEXT,
  started REAL NOT NULL, ended REAL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages(
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL, channel TEXT NOT NULL, sender TEXT NOT NULL,
  schema_name TEXT NOT NULL, payload TEXT NOT NULL, ts REAL NOT NULL, reply_to TEXT,
  correlation_id TEXT, receivers TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS messages_run ON messages(run_id);
CREATE TABLE IF NOT EXISTS consumptions(
  message_id TEXT NOT NULL, receiver TEXT NOT NULL, run_id TEXT NOT NULL,
  consumed_at REAL NOT NULL, PRIMARY KEY(message_id, receiver)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS refusals(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, ts REAL NOT NULL, sender TEXT NOT NULL,
  channel TEXT NOT NULL, reason TEXT NOT NULL, payload TEXT);
CREATE TABLE IF NOT EXISTS turns(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, creature TEXT NOT NULL,
  turn_index INTEGER NOT NULL, prefix_hash TEXT, prompt_tokens INTEGER,
  cached_tokens INTEGER, completion_tokens INTEGER, calls TEXT, outputs TEXT, error TEXT,
  started REAL NOT NULL, ended REAL);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, ts REAL NOT NULL, kind TEXT NOT NULL,
  creature TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_run ON events(run_id);
CREATE INDEX IF NOT EXISTS events_jobs ON events(run_id)
  WHERE kind = 'job_started' OR kind = 'job_ended' OR kind = 'generic';
DROP INDEX IF EXISTS events_run;
CREATE TABLE IF NOT EXISTS effects(
  run_id TEXT NOT NULL, key TEXT NOT NULL, creature TEXT NOT NULL, tool TEXT NOT NULL,
  ok INTEGER NOT NULL, result TEXT NOT NULL, ts REAL NOT NULL,
  PRIMARY KEY(run_id, key)) WITHOUT ROWID;
"""

# Logs written before send keys (or event numbers) existed get the column on open; a NULL
# key never collides. ``events.seq``: a session's event number (``terrarium serve``: its
# clients resume from it), so each event is one row, numbered or not.
# A run's events are read in log order (``events_by_run``) and, at resume, its jobs' by kind
# (``events_jobs``: only those kinds, so a turn's events add no row to it). An index of
# every row by (run_id, kind), ``events_run`` before, put each kind of a run's events on a
# leaf page of its own, and a turn's commit (nine kinds) wrote about one page a kind: 30 us
# more a turn (docs/performance-history.md, "Serve, session 18"); logs that have it drop it.
# events_jobs' WHERE (not ``kind IN (...)``: three values or more, SQLite builds a table of
# them for every row it inserts, 2 us a row)
JOB_KINDS_WHERE = "(kind = 'job_started' OR kind = 'job_ended' OR kind = 'generic')"
JOB_KINDS = frozenset({"job_started", "job_ended"})

SEND_KEY = """
CREATE UNIQUE INDEX IF NOT EXISTS messages_send_key ON messages(run_id, send_key)
  WHERE send_key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS events_seq ON events(run_id, seq) WHERE seq IS NOT NULL;
"""

MESSAGE_SQL = (
    "INSERT INTO messages(id, run_id, channel, sender, schema_name, payload, ts, reply_to,"
    " correlation_id, receivers, send_key) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)
EFFECT_SQL = (
    "INSERT OR IGNORE INTO effects(run_id, key, creature, tool, ok, result, ts)"
    " VALUES (?,?,?,?,?,?,?)"
)
CONSUME_SQL = (
    "INSERT OR IGNORE INTO consumptions(message_id, receiver, run_id, consumed_at) VALUES (?,?,?,?)"
)
REFUSAL_SQL = (
    "INSERT INTO refusals(run_id, ts, sender, channel, reason, payload) VALUES (?,?,?,?,?,?)"
)
EVENT_SQL = "INSERT INTO events(run_id, ts, kind, creature, data) VALUES (?,?,?,?,?)"
NUMBERED_EVENT_SQL = ("INSERT OR IGNORE INTO events(run_id, ts, kind, creature, data, seq)"
                      " VALUES (?,?,?,?,?,?)")
# ``terrarium serve`` writes a session's events of one commit as ONE row of kind ``batch``
# (each row costs SQLite its insert, its index entries and its share of the WAL pages: a
# turn's ten events were a fifth of an input's instructions): ``seq`` the last event's
# number (the events in it are numbered on from ``seq - n + 1``), ``ts`` the first's,
# ``data`` the events' own texts joined by ",\n" in brackets (a JSON array whose items are
# found again without decoding them: compact JSON never holds a raw newline). Every
# reader of the table takes them apart (``unbatched``). An event of a kind read by kind
# (``run_started``: the runs' pids; the jobs', ``generic``: ``events_jobs``) keeps a row of
# its own, as does an event alone in its commit.
BATCH_KIND = "batch"
_BATCH_SEP = ",\n"
ALONE_KINDS = JOB_KINDS | {"generic", "run_started"}


def batch_rows(run_id: str, seqs: Sequence[int], kinds: Sequence[str],
               rows: Sequence[tuple[float, str | None, str]]) -> list[tuple[Any, ...]]:
    """The ``events`` rows (``NUMBERED_EVENT_SQL``) of one session's events in one commit:
    consecutive ``seqs`` with their ``kinds`` and ``(ts, creature, text)``; runs of two or
    more as one ``batch`` row, the rest (and ``ALONE_KINDS``) a row each, in their order."""
    out: list[tuple[Any, ...]] = []
    n = len(seqs)
    i = 0
    while i < n:
        j = i
        while j < n and kinds[j] not in ALONE_KINDS:
            j += 1
        if j - i >= 2:  # events i..j-1 as one row
            out.append((run_id, rows[i][0], BATCH_KIND, None,
                        "[" + _BATCH_SEP.join([r[2] for r in rows[i:j]]) + "]", seqs[j - 1]))
            i = j
        else:
            ts, creature, text = rows[i]
            out.append((run_id, ts, kinds[i], creature, text, seqs[i]))
            i += 1
    return out


def batch_texts(data: str) -> list[str]:
    """The events' texts in a ``batch`` row's ``data``, as they were written."""
    return data[1:-1].split(_BATCH_SEP)


def text_kind(text: str) -> str:
    """An event text's ``kind`` (``event_json`` writes it after the event's fields, before
    ``seq``), read without decoding the text."""
    i = text.rindex('"kind":"') + 8
    return text[i:text.index('"', i)]


def unbatched(rows: Iterable[Sequence[Any]], kind_at: int, data_at: int,
              seq_at: int | None = None) -> list[list[Any]]:
    """``events`` rows with each ``batch`` row taken apart into its events, in order: a
    copy of the row for each, with its kind, text and (``seq_at``) number in place of the
    batch's."""
    out: list[list[Any]] = []
    for row in rows:
        if row[kind_at] != BATCH_KIND:
            out.append(list(row))
            continue
        texts = batch_texts(row[data_at])
        first = (row[seq_at] - len(texts) + 1) if seq_at is not None else 0
        for k, text in enumerate(texts):
            item = list(row)
            item[kind_at] = text_kind(text)
            item[data_at] = text
            if seq_at is not None:
                item[seq_at] = first + k
            out.append(item)
    return out


TURN_SQL = (
    "INSERT INTO turns(run_id, creature, turn_index, prefix_hash, prompt_tokens,"
    " cached_tokens, completion_tokens, calls, outputs, error, started, ended)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _dumps(value: Any) -> str:
    """``value`` as the log stores it (compact JSON, UTF-8 as is, anything else as its
    text). The usual values of a turn, a message of text fields and a turn's empty calls
    and outputs, go by orjson (the same text) or as "[]"; the rest (numbers, whose NaN
    orjson would write as null; nested values) by json."""
    if type(value) is dict and all(type(v) is str for v in value.values()) and all(
            type(k) is str for k in value):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:  # (a lone surrogate)
            pass
    elif type(value) is list and not value:
        return "[]"
    return _json(value)



def message_row(
    run_id: str, env: Envelope, receivers: Sequence[str], send_key: str | None = None
) -> tuple[Any, ...]:
    """The ``messages`` row for one envelope and the creatures meant to receive it.

    ``send_key`` is the send's deterministic id (see ``ChannelHub.send``): the log holds at
    most one message per key and run, which is what makes a repeated send a no-op.
    """
    return (
        env.id,
        run_id,
        env.channel,
        env.sender,
        env.schema_name,
        _dumps(env.payload),
        env.ts,
        env.reply_to,
        env.correlation_id,
        _receivers_json(receivers),
        send_key,
    )


_RECEIVERS: dict[tuple[str, ...], str] = {}  # a team's few receiver lists, encoded once


def _receivers_json(receivers: Sequence[str]) -> str:
    """``receivers`` as the JSON array the row holds (the same text ``_dumps`` writes)."""
    key = receivers if type(receivers) is tuple else tuple(receivers)
    text = _RECEIVERS.get(key)
    if text is None:
        if len(_RECEIVERS) >= 4096:  # bounded: a run with ever new lists re-encodes
            _RECEIVERS.clear()
        text = _RECEIVERS[key] = _dumps(list(key))
    return text


def refusal_row(
    run_id: str, sender: str, channel: str, reason: str, payload: Any
) -> tuple[Any, ...]:
    return (run_id, time.time(), sender, channel, reason, _dumps(payload))


def event_row(run_id: str, event: Event) -> tuple[Any, ...]:
    return (run_id, event.ts, event.kind, getattr(event, "creature", None), event_json(event))


# ``terrarium serve`` keeps a ``message_sent`` event row without its payload: the message's
# own row (``messages.payload``, committed no later than the event) holds it, and every
# reader of the events table puts it back (``payloads_back``), so a payload is stored once.
_SENT = '"kind":"message_sent"'


def sent_json(event: MessageSent, seq: int) -> str:
    """A numbered ``message_sent`` event's row text: its JSON without the payload."""
    return event_json(event, seq, without="payload")


def with_payload(stored: str, payload: Mapping[str, Any]) -> str:
    """A ``sent_json`` text with its payload put back: what ``event_json`` gives for the
    whole event (the payload is its last field, before ``kind``), without encoding the
    rest again."""
    i = stored.rindex(',"kind":')
    return f'{stored[:i]},"payload":{json_text(payload)}{stored[i:]}'


def payloads_back(datas: Sequence[str],
                  lookup: Callable[[list[str]], dict[str, str]]) -> list[str]:
    """Events-table texts with every ``message_sent`` payload the row left out put back
    from its message's row (``lookup``: message ids -> their payload text), in the key order
    ``event_json`` writes; rows that have theirs (older logs, unnumbered rows) stay as
    they are."""
    missing: dict[int, dict[str, Any]] = {}
    for i, data in enumerate(datas):
        if _SENT in data:
            parsed = json.loads(data)
            if parsed.get("kind") == "message_sent" and "payload" not in parsed:
                missing[i] = parsed
    if not missing:
        return list(datas)
    payloads = lookup(sorted({str(d.get("message_id")) for d in missing.values()}))
    out = list(datas)
    for i, parsed in missing.items():
        text = payloads.get(str(parsed.get("message_id")))
        if text is None:  # (no message row: the event's default, an empty payload)
            continue
        rebuilt: dict[str, Any] = {}
        for key, value in parsed.items():
            if key == "kind":
                rebuilt["payload"] = json.loads(text)
            rebuilt[key] = value
        out[i] = json_text(rebuilt)
    return out


class RunInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    terrarium: str
    path: str | None
    started: float
    ended: float | None
    status: RunStatus


class TurnRecord(BaseModel):
    """One creature turn as the runtime reports it at turn end."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    creature: str
    turn_index: int
    prefix_hash: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    calls: list[Any] = Field(default_factory=list)
    outputs: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    started: float
    ended: float | None = None


class RefusalRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    ts: float
    sender: str
    channel: str
    reason: str
    payload: Any = None


def turn_row(run_id: str, turn: TurnRecord) -> tuple[Any, ...]:
    return (
        run_id,
        turn.creature,
        turn.turn_index,
        turn.prefix_hash,
        turn.prompt_tokens,
        turn.cached_tokens,
        turn.completion_tokens,
        _dumps(turn.calls),
        _dumps(turn.outputs),
        turn.error,
        turn.started,
        turn.ended,
    )


def replay_rows(conn: sqlite3.Connection,
                ops: Iterable[tuple[str, Sequence[Sequence[Any]]]]) -> None:
    """Write mirrored rows inside the caller's transaction; a row already there (the same
    row from a second process) is kept once."""
    for sql, rows in ops:
        for row in rows:
            try:
                conn.execute(sql, tuple(row))
            except sqlite3.IntegrityError:
                pass  # the same row from a second process: keep the first


__all__ = [
    "ALONE_KINDS",
    "BATCH_KIND",
    "CONSUME_SQL",
    "EFFECT_SQL",
    "EVENT_SQL",
    "JOB_KINDS",
    "JOB_KINDS_WHERE",
    "MESSAGE_SQL",
    "NUMBERED_EVENT_SQL",
    "REFUSAL_SQL",
    "SCHEMA",
    "SEND_KEY",
    "TURN_SQL",
    "RefusalRecord",
    "RunInfo",
    "TurnRecord",
    "batch_rows",
    "batch_texts",
    "event_row",
    "message_row",
    "payloads_back",
    "refusal_row",
    "replay_rows",
    "sent_json",
    "text_kind",
    "turn_row",
    "unbatched",
    "with_payload",
]
