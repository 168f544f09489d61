"""The log writer shared by many runs (``terrarium serve``): rows put without waiting go
with the next commit and their callbacks are told once it is in; a write inside
``commit_at_once`` commits in the caller's step; one writer serves several hubs' runs."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import CONSUME_SQL, NUMBERED_EVENT_SQL, DurableLog
from terrarium.channels.writer import LogWriter, commit_at_once
from tests.writer_helpers import count_transactions

pytestmark = pytest.mark.anyio


async def test_put_rows_commit_with_the_next_write_and_tell_after(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = LogWriter(log)
        told: list[int] = []
        # put before the writer runs: kept for its first commit
        batch = writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
        batch.after.append(lambda: told.append(1))
        counts = count_transactions(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            b2 = writer.put(NUMBERED_EVENT_SQL, [(run, 2.0, "x", None, "{}", 2)])
            b2.after.append(lambda: told.append(2))
            await writer.write(CONSUME_SQL, ("m1", "c", run, 3.0))  # the same commit
            assert told == [1, 2]
            tg.cancel_scope.cancel()
        assert counts["tx"] == 1
        assert log.query("SELECT seq FROM events WHERE run_id=? ORDER BY seq", (run,)) == [
            (1,), (2,)]


async def test_commit_at_once_commits_in_the_callers_step(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = LogWriter(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
            with commit_at_once():
                # committed before the writer's task could run: nothing else ran meanwhile
                with anyio.CancelScope() as scope:
                    scope.cancel()  # a trip round the loop would raise here
                    await writer.write(CONSUME_SQL, ("m1", "c", run, 3.0))
            assert not scope.cancelled_caught
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(1,)]
            writer.put(NUMBERED_EVENT_SQL, [(run, 2.0, "x", None, "{}", 2)])
            writer.commit_now()
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(2,)]
            tg.cancel_scope.cancel()


async def test_a_numbered_event_is_kept_once(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        row = (run, 1.0, "x", None, "{}", 7)
        log.write_batch([(NUMBERED_EVENT_SQL, [row])])
        log.write_batch([(NUMBERED_EVENT_SQL, [row])])
        assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(1,)]


async def test_a_failed_commit_reaches_each_waiter_however_it_waited(tmp_path: Path) -> None:
    """A batch's ``done`` is made only for a waiter: one that waited for the writer's
    commit and one whose commit ran in its own step both get the commit's failure, and a
    batch nobody waited on is committed all the same."""
    from terrarium.errors import RuntimeFailure

    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = LogWriter(log)
        bad = ("INSERT INTO no_such_table(x) VALUES (?)", (1,))
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            with anyio.fail_after(20):
                with pytest.raises(RuntimeFailure, match="could not be written"):
                    await writer.write(*bad)  # waits for the writer's commit
                with commit_at_once(), pytest.raises(RuntimeFailure,
                                                     match="could not be written"):
                    await writer.write(*bad)  # committed in this step
                writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
                await writer.write(CONSUME_SQL, ("m1", "c", run, 2.0))
            tg.cancel_scope.cancel()
        assert log.query("SELECT seq FROM events WHERE run_id=?", (run,)) == [(1,)]
