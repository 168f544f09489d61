"""A distributed run followed live from the broker, as a read-only TeamHandle.

``terrarium monitor RUN_ID --broker URL`` on a run still going: the run's log stream is
tailed (``channels/nats/follow.py``); each batch is written to a local copy of the log
(where the traffic panel reads message payloads), folded into creature statuses,
transcripts and prompt maps, and published on this handle's own bus, which the monitor
folds exactly as it folds a local run's. When the run ends a ``RunEnded`` event says so;
the monitor stays open on what it has.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterable
from pathlib import Path

from terrarium import events as ev
from terrarium.channels.bus import EventBus
from terrarium.channels.log import DurableLog, RunInfo
from terrarium.channels.mirror import LogBatch, apply_ops
from terrarium.tui.delegation import is_subagent_label
from terrarium.tui.replay import FoldedHandle, FoldedRun, load_recorded_team

__all__ = ["LIVE_EVENT_BUFFER", "READ_ONLY_LIVE", "LiveRunHandle"]

READ_ONLY_LIVE = ("This monitor follows a run on the broker from outside it, so nothing "
                  "can be sent from here.")
# the first batches are the run's whole history so far: room for all of it, so the
# monitor's traffic panel is not cut short while it catches up
LIVE_EVENT_BUFFER = 1 << 16


class LiveRunHandle(FoldedHandle):
    """TeamHandle over a run on the broker, fed by ``follow`` (read-only)."""

    refusal = READ_ONLY_LIVE

    def __init__(self, run: RunInfo, folder: Path) -> None:
        self.run = run
        self.run_id = run.run_id
        self.team, self.team_note = load_recorded_team(run)
        self.bus = EventBus()
        self.log_path: Path | None = folder / "live.sqlite3"
        DurableLog(self.log_path).close()  # the schema
        self._conn = sqlite3.connect(str(self.log_path), isolation_level=None)
        self._run = FoldedRun(self.team)
        self.events_seen = 0
        self.ended: str | None = None

    async def follow(self, batches: AsyncIterable[LogBatch]) -> None:
        """Take the run's log batches until it ends; then publish ``RunEnded``."""
        try:
            async for batch in batches:
                self.take(batch)
                if batch.ended is not None:
                    return
        finally:
            self._conn.close()

    def take(self, batch: LogBatch) -> None:
        """Record, fold and publish one batch (the bus never waits for the monitor)."""
        if batch.ops:
            apply_ops(self._conn, batch.ops)
        for e in batch.events:
            creature = getattr(e, "creature", None)
            if isinstance(creature, str) and not is_subagent_label(creature):
                self._run.add(creature)
            self._run.fold(e)
            self.bus.publish(e)
        self.events_seen += len(batch.events)
        if batch.ended is not None and self.ended is None:
            self.ended = batch.ended
            last = batch.events[-1].ts if batch.events else self.run.started
            self.bus.publish(ev.RunEnded(ts=last, run_id=self.run_id, status=batch.ended))
