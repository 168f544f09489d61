"""Tail a distributed run's log stream as it grows: what ``terrarium monitor --broker`` shows live.

Every process of a run mirrors its SQLite writes to the run's log stream (``(sql, rows)``
batches, in the order each committed them). A follower reads that stream from its first
message with an ack-less pull consumer (it changes nothing on the broker, and any number
of monitors may watch), hands each batch back with the typed events found in it, and stops
once the run has ended: the starting process mirrors the run's final status
(``UPDATE runs SET status=...``) before it announces the end, so what was logged before the
end is read before the follower stops. A run whose end never reached the log stream (its
starter died) is caught by the runs record when the stream has been idle.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from terrarium.channels.mirror import LogBatch, apply_ops, parse_batch
from terrarium.channels.nats.naming import RUNS_STREAM, log_stream, log_subject, run_subject
from terrarium.errors import RuntimeFailure

# LogBatch and apply_ops live in channels/mirror.py (the monitor takes them without nats)
__all__ = ["FETCH_BATCH", "LogBatch", "apply_ops", "follow_run", "run_status"]

FETCH_BATCH = 256  # stream messages per pull: bounds what one fetch holds in memory



async def run_status(js: JetStreamContext, terrarium: str, run_id: str) -> str | None:
    """The run's status in its latest runs record (None when the broker has none)."""
    try:
        raw = await js.get_last_msg(RUNS_STREAM, run_subject(terrarium, run_id))
    except nats.js.errors.NotFoundError:
        return None
    status = json.loads(raw.data or b"{}").get("status")
    return str(status) if status is not None else None


async def follow_run(js: JetStreamContext, run_id: str, terrarium: str, *,
                     idle: float = 1.0, batch: int = FETCH_BATCH) -> AsyncIterator[LogBatch]:
    """Yield run ``run_id``'s log batches from the first, as they are published, in order.

    Returns after the batch that ends the run (its ``ended`` set; an empty batch carries
    the status when the end came only through the runs record). ``idle`` is how long one
    pull waits for a new message before the runs record is looked at again.
    """
    try:
        sub = await js.pull_subscribe(
            log_subject(run_id), stream=log_stream(run_id),
            config=ConsumerConfig(ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.ALL,
                                  inactive_threshold=max(30.0, idle * 10)))
    except nats.js.errors.NotFoundError:
        raise RuntimeFailure(f"run {run_id} has no log stream on the broker",
                             suggestion="is it a run started with --broker?") from None
    ended: str | None = None
    try:
        while True:
            try:
                msgs = await sub.fetch(batch, timeout=idle)
            except (nats.errors.TimeoutError, TimeoutError):
                msgs = []
            pending = msgs[-1].metadata.num_pending if msgs else 0
            for i, msg in enumerate(msgs):
                out, end = parse_batch(msg.data, run_id)
                ended = ended or end
                if ended is not None and i == len(msgs) - 1 and pending == 0:
                    out.ended = ended  # nothing left behind the end: the last batch
                    yield out
                    return
                if out.ops:
                    yield out
            if not msgs:
                # the stream is idle: an end recorded only in the runs record (or an end
                # already seen whose stream is drained) finishes the follow
                status = ended or await run_status(js, terrarium, run_id)
                if status is not None and status != "running":
                    yield LogBatch(ended=status)
                    return
    finally:
        try:
            await sub.unsubscribe()
        except Exception:  # the connection closed under us; the consumer expires anyway
            pass
