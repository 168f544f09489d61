"""What the broker knows about runs: one record per run (and its status changes) in the
``TERRARIUM_RUNS`` stream, and each run's log stream, read back as an SQLite log.

The log stream holds the ``(sql, rows)`` writes every process of the run committed to its
own SQLite log (``NatsTransport.mirror``). Replaying them in stream order into a fresh
file gives the run's whole log, so ``terrarium log`` and ``terrarium monitor`` work
unchanged, from any machine that reaches the broker. A row two processes both wrote (a
message re-sent under the same id after a crash) is kept once.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from terrarium.channels.log import DurableLog
from terrarium.channels.nats.naming import RUNS_STREAM, log_stream, log_subject, run_subject, token

__all__ = [
    "latest_run",
    "materialize_log",
    "publish_run",
    "read_all",
    "run_record",
    "run_records",
    "wait_run_end",
]


async def read_all(js: JetStreamContext, stream: str, subject: str) -> list[Msg]:
    """Every message on ``subject`` (wildcards allowed) in ``stream``, oldest first."""
    try:
        info = await js.stream_info(stream)
    except nats.js.errors.NotFoundError:
        return []
    if not info.state.messages:
        return []
    sub = await js.pull_subscribe(subject, stream=stream, config=ConsumerConfig(
        ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.ALL, inactive_threshold=30.0))
    out: list[Msg] = []
    try:
        while True:
            try:
                msgs = await sub.fetch(256, timeout=1.0)
            except (nats.errors.TimeoutError, TimeoutError):
                break
            out.extend(msgs)
            if not msgs or msgs[-1].metadata.num_pending == 0:
                break
    finally:
        await sub.unsubscribe()
    return out


async def publish_run(js: JetStreamContext, record: dict[str, Any]) -> None:
    """Add ``record`` (run_id, terrarium, config_hash, status, ...) to the runs stream."""
    record = {**record, "updated": time.time()}
    await js.publish(run_subject(record["terrarium"], record["run_id"]),
                     json.dumps(record).encode())


async def run_record(js: JetStreamContext, terrarium: str, run_id: str) -> dict[str, Any] | None:
    """The latest record of one run, or None."""
    try:
        raw = await js.get_last_msg(RUNS_STREAM, run_subject(terrarium, run_id))
    except nats.js.errors.NotFoundError:
        return None
    return json.loads(raw.data or b"{}")


async def run_records(js: JetStreamContext, terrarium: str | None = None
                      ) -> list[dict[str, Any]]:
    """The latest record of every run (of ``terrarium``), oldest run first."""
    subject = f"trm.runs.{token(terrarium)}.*" if terrarium else "trm.runs.>"
    latest: dict[str, dict[str, Any]] = {}
    for msg in await read_all(js, RUNS_STREAM, subject):
        rec = json.loads(msg.data)
        latest[rec["run_id"]] = rec
    return sorted(latest.values(), key=lambda r: r.get("started", 0))


async def latest_run(js: JetStreamContext, terrarium: str, *, wait: float = 0.0,
                     poll: float = 0.3) -> dict[str, Any] | None:
    """The newest still running run of ``terrarium``, waiting up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        running = [r for r in await run_records(js, terrarium) if r.get("status") == "running"]
        if running:
            return running[-1]
        if time.monotonic() >= deadline:
            return None
        await anyio.sleep(poll)


async def wait_run_end(js: JetStreamContext, terrarium: str, run_id: str, *,
                       poll: float = 0.3) -> str:
    """Return the run's final status once it is no longer running."""
    while True:
        rec = await run_record(js, terrarium, run_id)
        if rec is not None and rec.get("status") != "running":
            return str(rec.get("status"))
        await anyio.sleep(poll)


async def materialize_log(js: JetStreamContext, run_id: str, path: Path) -> int:
    """Write run ``run_id``'s log from the broker into the SQLite file ``path``.

    Returns how many records were replayed. The run's row comes from its latest runs
    record (the status the starting process announced last).
    """
    DurableLog(path).close()  # the schema
    msgs = await read_all(js, log_stream(run_id), log_subject(run_id))
    records = [m for m in await read_all(js, RUNS_STREAM, f"trm.runs.*.{run_id}")]
    conn = sqlite3.connect(str(path))
    n = 0
    try:
        conn.execute("BEGIN")
        for msg in msgs:
            for sql, rows in json.loads(msg.data)["ops"]:
                for row in rows:
                    try:
                        conn.execute(sql, row)
                    except sqlite3.IntegrityError:
                        pass  # the same row from a second process: keep the first
                    n += 1
        if records:
            rec = json.loads(records[-1].data)
            conn.execute(
                "INSERT OR REPLACE INTO runs(run_id, terrarium, path, started, ended, status)"
                " VALUES (?,?,?,?,?,?)",
                (run_id, rec["terrarium"], rec.get("path"), rec.get("started", 0.0),
                 rec.get("ended"), rec.get("status", "running")))
        conn.execute("COMMIT")
    finally:
        conn.close()
    return n
