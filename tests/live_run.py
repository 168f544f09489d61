"""A run on a real broker written by hand, the way a run's processes write it: a runs record
and the run's log stream of mirrored ``(sql, rows)`` batches. The live-follow tests publish
its batches while a follower reads, so they decide exactly when each batch exists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StreamConfig

from terrarium.channels.log import EVENT_SQL, event_row
from terrarium.channels.nats import connect_broker, publish_run
from terrarium.channels.nats.naming import RUNS_STREAM, log_stream, log_subject
from terrarium.events import Event

__all__ = ["T0", "HandRun", "hand_run"]

T0 = 1_700_000_000.0


class HandRun:
    """One run's records on the broker, published a batch at a time."""

    def __init__(self, js: JetStreamContext, run_id: str, terrarium: str, path: str) -> None:
        self.js, self.run_id, self.terrarium, self.path = js, run_id, terrarium, path

    async def announce(self, status: str) -> None:
        await publish_run(self.js, {"run_id": self.run_id, "terrarium": self.terrarium,
                                    "path": self.path, "config_hash": "x", "status": status,
                                    "started": T0, "ended": None})

    async def publish(self, ops: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        data = json.dumps({"src": "test", "ops": [[sql, [list(r) for r in rows]]
                                                  for sql, rows in ops]})
        await self.js.publish(log_subject(self.run_id), data.encode())

    async def events(self, events: Sequence[Event]) -> None:
        await self.publish([(EVENT_SQL, [event_row(self.run_id, e) for e in events])])

    async def end(self, status: str = "completed") -> None:
        """What ``announce_end`` does: the status into the log stream, then the record."""
        await self.publish([("UPDATE runs SET status=?, ended=? WHERE run_id=?",
                             [(status, T0 + 60, self.run_id)])])
        await self.announce(status)


@asynccontextmanager
async def hand_run(url: str, run_id: str = "R1", terrarium: str = "relay",
                   path: str = "."):  # type: ignore[no-untyped-def]
    nc = await connect_broker(url, name="test run")
    js = nc.jetstream()
    for name, subjects in ((RUNS_STREAM, ["trm.runs.>"]), (log_stream(run_id),
                                                           [log_subject(run_id)])):
        await js.add_stream(StreamConfig(name=name, subjects=subjects,
                                         retention=RetentionPolicy.LIMITS))
    run = HandRun(js, run_id, terrarium, path)
    await run.announce("running")
    await run.publish([("INSERT INTO runs(run_id, terrarium, path, started, ended, status)"
                        " VALUES (?,?,?,?,?,?)",
                        [(run_id, terrarium, path, T0, None, "running")])])
    try:
        yield run, js
    finally:
        await nc.close()
