"""Following a run's log stream live (terrarium/channels/nats/follow.py) on a real nats-server:
batches published while the follower reads come out in order, and the follow stops at the
run's end. Waits are on conditions (anyio events); fail_after is only a safety net.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.channels.nats.follow import LogBatch, apply_ops, follow_run
from terrarium.config import load_team
from terrarium.events import CreatureState, Event, TranscriptAppended, TranscriptEntry
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime
from tests.live_run import T0, hand_run
from tests.nats_fixtures import NatsServer

FIXTURES = Path(__file__).parents[1] / "runtime_fixtures"


def _state(creature: str, state: str, i: int) -> CreatureState:
    return CreatureState(ts=T0 + i, creature=creature, state=state)  # type: ignore[arg-type]


def test_follower_yields_two_batches_in_order_and_stops_at_the_end(
        nats_server: NatsServer) -> None:
    first: list[Event] = [_state("a", "thinking", 1), _state("a", "idle", 2),
                          _state("b", "thinking", 3)]
    second: list[Event] = [
        TranscriptAppended(ts=T0 + 4, creature="b",
                           entry=TranscriptEntry(kind="assistant", text="pong", ts=T0 + 4)),
        _state("b", "idle", 5), _state("c", "thinking", 6), _state("c", "idle", 7)]

    async def go() -> tuple[list[Event], list[LogBatch]]:
        seen: list[Event] = []
        batches: list[LogBatch] = []
        got_first = anyio.Event()
        async with hand_run(nats_server.url) as (run, js):
            await run.events(first)

            async def follow() -> None:
                async for batch in follow_run(js, run.run_id, run.terrarium, idle=0.2):
                    batches.append(batch)
                    seen.extend(batch.events)
                    if len(seen) >= len(first):
                        got_first.set()

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(follow)
                    await got_first.wait()  # the follower has caught up with batch one
                    assert seen == first
                    await run.events(second[:2])  # batch two, while it follows
                    await run.events(second[2:])
                    await run.end("completed")
                # the task group only closes once the follower returned by itself
        return seen, batches

    seen, batches = anyio.run(go)
    assert seen == first + second
    assert batches[-1].ended == "completed"
    assert all(b.ended is None for b in batches[:-1])


def test_follow_ends_on_the_runs_record_when_the_log_never_says(
        nats_server: NatsServer) -> None:
    """A run whose starter died: no end in the log stream, the runs record says failed."""

    async def go() -> list[LogBatch]:
        async with hand_run(nats_server.url) as (run, js):
            await run.events([_state("a", "thinking", 1)])
            await run.announce("failed")
            with anyio.fail_after(20):
                return [b async for b in follow_run(js, run.run_id, run.terrarium, idle=0.2)]

    batches = anyio.run(go)
    assert [e for b in batches for e in b.events] == [_state("a", "thinking", 1)]
    assert batches[-1].ended == "failed"


def test_apply_ops_rebuilds_the_log_locally(nats_server: NatsServer, tmp_path: Path) -> None:
    """The follower's batches, written to a local file, read back as the run's log."""

    async def go() -> list[LogBatch]:
        async with hand_run(nats_server.url) as (run, js):
            await run.events([_state("a", "thinking", 1), _state("a", "idle", 2)])
            await run.end("completed")
            with anyio.fail_after(20):
                return [b async for b in follow_run(js, run.run_id, run.terrarium, idle=0.2)]

    path = tmp_path / "copy.sqlite3"
    DurableLog(path).close()
    conn = sqlite3.connect(str(path), isolation_level=None)
    for batch in anyio.run(go):
        apply_ops(conn, batch.ops)
    conn.close()
    with DurableLog(path) as log:
        assert log.run("R1").status == "completed"
        assert log.typed_events("R1") == [_state("a", "thinking", 1), _state("a", "idle", 2)]


def test_following_a_real_distributed_run(nats_server: NatsServer, tmp_path: Path) -> None:
    """The relay team on the broker, followed from its start: the follower sees every event
    the run logged, in log order, and stops when the run ends."""
    team = load_team(FIXTURES / "relay")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", broker=nats_server.url)

    async def go() -> tuple[str, list[LogBatch]]:
        from terrarium.channels.nats import connect_broker

        batches: list[LogBatch] = []
        nc = await connect_broker(nats_server.url, name="test follower")
        try:
            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    async with TeamRuntime(team, opts) as rt:
                        async def follow() -> None:
                            async for b in follow_run(nc.jetstream(), rt.run_id, team.name,
                                                      idle=0.2):
                                batches.append(b)

                        tg.start_soon(follow)
                        await rt.send_user("ping")
                        await rt.wait_idle()
        finally:
            await nc.close()
        return rt.run_id, batches

    run_id, batches = anyio.run(go)
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        logged = log.typed_events(run_id)
    assert [e for b in batches for e in b.events] == logged
    assert any(isinstance(e, TranscriptAppended) and "pong-42" in e.entry.text for e in logged)
    assert batches[-1].ended == "completed"


def test_a_missing_log_stream_is_a_sentence(nats_server: NatsServer) -> None:
    from terrarium.channels.nats import connect_broker
    from terrarium.errors import RuntimeFailure

    async def go() -> None:
        nc = await connect_broker(nats_server.url)
        try:
            with pytest.raises(RuntimeFailure, match="no log stream"):
                async for _ in follow_run(nc.jetstream(), "NOPE", "relay"):
                    pass
        finally:
            await nc.close()

    anyio.run(go)
