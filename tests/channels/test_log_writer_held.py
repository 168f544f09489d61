"""``LogWriter.held``: rows added by a caller that commits them itself (serve's input) do
not wake the writer's task, which would only find them committed; rows the caller leaves
behind (it failed, or was cancelled before its commit) go to the writer when it leaves."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import CONSUME_SQL, NUMBERED_EVENT_SQL, DurableLog
from terrarium.channels.writer import LogWriter, commit_at_once
from tests.writer_helpers import count_transactions

pytestmark = pytest.mark.anyio


class _Steps(LogWriter):
    """Counts the writer task's wake-ups (each one a step of its task)."""

    def __init__(self, log: DurableLog) -> None:
        super().__init__(log, busy=lambda: False)
        self.wakes = 0

    async def _gather(self) -> None:
        self.wakes += 1
        await super()._gather()


async def _trips(n: int) -> None:
    for _ in range(n):
        await anyio.lowlevel.checkpoint()


async def test_rows_of_a_holder_that_commits_them_leave_the_writer_asleep(
        tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = _Steps(log)
        counts = count_transactions(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            for i in range(3):  # an input: its message, its events, its commit
                with commit_at_once(together=True), writer.held():
                    await writer.write(CONSUME_SQL, (f"m{i}", "c", run, 1.0))
                    writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 2 * i + 1)])
                    writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 2 * i + 2)])
                    await writer.commit_soon(together=True)
                await _trips(3)
            assert writer.wakes == 0  # (without ``held``: one a commit)
            tg.cancel_scope.cancel()
        assert counts["tx"] == 6
        assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(6,)]


async def test_rows_a_holder_leaves_behind_are_committed_by_the_writer(
        tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = _Steps(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            with pytest.raises(RuntimeError), writer.held():  # failed before its commit
                writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
                raise RuntimeError("refused")
            with anyio.CancelScope() as scope, writer.held():  # cancelled at its trip
                scope.cancel()
                with commit_at_once(together=True):
                    await writer.write(CONSUME_SQL, ("m1", "c", run, 1.0))
            assert scope.cancelled_caught
            await _trips(5)  # the writer's step (woken when the holders left)
            assert log.query("SELECT count(*) FROM consumptions") == [(1,)]
            assert writer.wakes >= 1
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(1,)]
            tg.cancel_scope.cancel()


async def test_a_holder_inside_a_holder_hands_over_only_when_the_last_leaves(
        tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = _Steps(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            with writer.held():
                with writer.held():
                    writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
                await _trips(3)
                assert writer.wakes == 0
            await _trips(5)
            assert writer.wakes == 1
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(1,)]
            tg.cancel_scope.cancel()


async def test_other_tasks_rows_wake_the_writer_while_a_holder_waits(tmp_path: Path) -> None:
    """A holder waiting on something else (a full inbox) holds up no one else's rows."""
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("t")
        writer = _Steps(log)
        release = anyio.Event()

        async def holder() -> None:
            with writer.held():
                writer.put(NUMBERED_EVENT_SQL, [(run, 1.0, "x", None, "{}", 1)])
                await release.wait()

        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            tg.start_soon(holder)
            await anyio.lowlevel.checkpoint()
            with anyio.fail_after(5):  # another task's write commits (the holder's row too)
                await writer.write(CONSUME_SQL, ("m1", "c", run, 1.0))
            assert log.query("SELECT count(*) FROM events WHERE run_id=?", (run,)) == [(1,)]
            release.set()
            tg.cancel_scope.cancel()
