"""The shared log writer beside gated turns (``LogWriter(busy=...)``, ``terrarium serve``):
while turns compute, a commit waits a few trips for more rows (one commit for several
turns' rows); a request's write (``commit_at_once``, ``commit_soon``) is not kept waiting
for that, and every request of the same trip shares its commit. Counted in transactions
and trips, never in seconds."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from terrarium.channels.log import CONSUME_SQL, NUMBERED_EVENT_SQL, DurableLog
from terrarium.channels.writer import LogWriter, commit_at_once
from tests.writer_helpers import count_transactions

pytestmark = pytest.mark.anyio


def _event(run: str, seq: int) -> tuple[object, ...]:
    return (run, float(seq), "x", None, "{}", seq)


async def test_while_busy_rows_of_several_trips_share_a_commit(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        busy = [True]
        writer = LogWriter(log, busy=lambda: busy[0], patience=8)
        counts = count_transactions(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            for seq in range(1, 5):  # four "turns", a trip apart
                writer.put(NUMBERED_EVENT_SQL, [_event(run, seq)])
                await anyio.lowlevel.checkpoint()
            assert counts["tx"] == 0  # still gathering: the loop is busy
            for _ in range(10):  # past its patience: committed even while busy
                await anyio.lowlevel.checkpoint()
            assert counts["tx"] == 1
            busy[0] = False
            writer.put(NUMBERED_EVENT_SQL, [_event(run, 5)])
            for _ in range(3):  # not busy: the writer's next step commits
                await anyio.lowlevel.checkpoint()
            assert counts["tx"] == 2
            tg.cancel_scope.cancel()
        assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(5,)]


async def test_requests_commit_together_without_waiting_for_turns(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = LogWriter(log, busy=lambda: True, patience=10_000)
        counts = count_transactions(log)
        done: list[int] = []

        async def request(n: int) -> None:
            with commit_at_once(together=True):
                await writer.write(CONSUME_SQL, (f"m{n}", "c", run, float(n)))
            writer.put(NUMBERED_EVENT_SQL, [_event(run, n)])
            await writer.commit_soon(together=True)  # the events it caused, before its answer
            done.append(n)

        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            with anyio.fail_after(10):  # a hang guard: patience alone would be 10,000 trips
                async with anyio.create_task_group() as requests:
                    for n in range(1, 21):
                        requests.start_soon(request, n)
            tg.cancel_scope.cancel()
        assert sorted(done) == list(range(1, 21))
        assert counts["tx"] == 2  # twenty requests: their messages, then their events
        assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(20,)]


async def test_a_request_alone_commits_in_its_own_step(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = LogWriter(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            writer.put(NUMBERED_EVENT_SQL, [_event(run, 1)])
            with anyio.CancelScope() as scope:
                scope.cancel()  # a trip round the loop would raise here
                await writer.commit_soon()
            assert not scope.cancelled_caught
            busy = LogWriter(log, busy=lambda: True)  # alone: at once, even beside turns
            busy.put(NUMBERED_EVENT_SQL, [_event(run, 2)])
            with anyio.CancelScope() as scope:
                scope.cancel()
                await busy.commit_soon()
            assert not scope.cancelled_caught
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(2,)]
            tg.cancel_scope.cancel()
