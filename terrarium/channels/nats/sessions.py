"""What a served team's sessions need from the broker: the runs records as they change
(a worker learns which sessions are loaded), a session run's log stream read from a
position (what the creatures in workers did, and their saved conversations), and claims
(one worker at a time runs a creature for a session, so its conversation stays one line).

A claim is a key in a JetStream key-value bucket whose entries expire after the bucket's
TTL (the broker's clock): ``create`` succeeds for one worker only, the owner refreshes it
with a compare-and-set update, and a worker that dies stops refreshing, so after the TTL
another may take over. The TTL is in the bucket's name, so servers with different ack waits
never fight over one bucket's settings.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from terrarium.channels.mirror import Ops
from terrarium.channels.nats.naming import RUNS_STREAM, log_stream, log_subject, token

__all__ = ["Claims", "log_batches", "watch_runs"]

_FETCH = 256


async def watch_runs(js: JetStreamContext, terrarium: str, *, idle: float = 1.0
                     ) -> AsyncIterator[dict[str, Any] | None]:
    """The runs records of ``terrarium``: the latest of each run first, then each new one
    as it is published (an ack-less consumer: it changes nothing on the broker). Yields
    None after each idle wait, so the caller can look at its clock."""
    sub = await js.pull_subscribe(
        f"trm.runs.{token(terrarium)}.*", stream=RUNS_STREAM,
        config=ConsumerConfig(ack_policy=AckPolicy.NONE,
                              deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
                              inactive_threshold=max(30.0, idle * 10)))
    try:
        while True:
            try:
                msgs = await sub.fetch(_FETCH, timeout=idle)
            except (nats.errors.TimeoutError, TimeoutError):
                yield None
                continue
            for msg in msgs:
                try:
                    yield json.loads(msg.data)
                except ValueError:
                    continue
    finally:
        try:
            await sub.unsubscribe()
        except Exception:  # the connection closed under us; the consumer expires anyway
            pass


async def log_batches(js: JetStreamContext, run_id: str, after: int = 0, *,
                      follow: bool = True, idle: float = 0.5
                      ) -> AsyncIterator[tuple[int, str, Ops]]:
    """Run ``run_id``'s mirrored write batches after stream sequence ``after``, oldest
    first: ``(seq, source, ops)``. ``follow``: wait for new ones for ever; else stop at the
    end of what the stream holds now."""
    try:
        info = await js.stream_info(log_stream(run_id))
    except nats.js.errors.NotFoundError:
        return
    if not follow and info.state.last_seq <= after:
        return
    start = max(after + 1, info.state.first_seq or 1)
    sub = await js.pull_subscribe(
        log_subject(run_id), stream=log_stream(run_id),
        config=ConsumerConfig(ack_policy=AckPolicy.NONE,
                              deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
                              opt_start_seq=start, inactive_threshold=30.0))
    try:
        while True:
            try:
                msgs = await sub.fetch(_FETCH, timeout=idle)
            except (nats.errors.TimeoutError, TimeoutError):
                if not follow:
                    return
                continue
            for msg in msgs:
                try:
                    data = json.loads(msg.data)
                    ops: Ops = [(str(sql), rows) for sql, rows in data["ops"]]
                except (ValueError, KeyError, TypeError):
                    ops = []  # not a record this version understands: skipped, position kept
                    data = {}
                yield msg.metadata.sequence.stream, str(data.get("src", "")), ops
            if not follow and msgs and msgs[-1].metadata.num_pending == 0:
                return
    finally:
        try:
            await sub.unsubscribe()
        except Exception:
            pass


class Claims:
    """Who runs which creature of which session: one key per (run, creature)."""

    def __init__(self, kv: KeyValue, ttl: float) -> None:
        self.kv = kv
        self.ttl = ttl

    @classmethod
    async def open(cls, js: JetStreamContext, ttl: float) -> Claims:
        """The claims bucket for ``ttl`` seconds (made if it is not there yet)."""
        bucket = f"TRM_CLAIMS_{round(ttl * 1000)}"
        try:
            kv = await js.key_value(bucket)
        except nats.js.errors.BucketNotFoundError:
            kv = await js.create_key_value(KeyValueConfig(
                bucket=bucket, ttl=ttl, history=1, storage=StorageType.FILE))
        return cls(kv, ttl)

    @staticmethod
    def key(run_id: str, creature: str) -> str:
        return f"{token(run_id)}.{token(creature)}"

    async def take(self, run_id: str, creature: str, owner: str) -> int | None:
        """Claim ``creature`` of run ``run_id`` for ``owner``: its revision (refresh with
        it), or None when another owner holds it."""
        try:
            return await self.kv.create(self.key(run_id, creature), owner.encode())
        except nats.js.errors.KeyWrongLastSequenceError:
            return None
        except nats.errors.Error:  # the broker did not answer now: not ours; asked again
            return None

    async def refresh(self, run_id: str, creature: str, owner: str, revision: int) -> int | None:
        """Keep the claim: its new revision, or None when it was lost (expired and taken,
        or gone); the old one when the broker did not answer now (the next refresh tells)."""
        try:
            return await self.kv.update(self.key(run_id, creature), owner.encode(),
                                        last=revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            return None
        except nats.errors.Error:
            return revision

    async def release(self, run_id: str, creature: str, revision: int) -> None:
        """Give the claim up (only if it is still ours)."""
        try:
            await self.kv.delete(self.key(run_id, creature), last=revision)
        except (nats.js.errors.KeyWrongLastSequenceError, nats.errors.Error):
            pass
