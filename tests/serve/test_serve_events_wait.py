"""A session's readers wait for its next commit: every reader waiting is woken by the
commit that brings its rows (the wake-up is made by the first waiter and dropped by that
commit), a reader that comes later waits for the next one, and closing the session wakes
them all with nothing. A reader behind by more than the last commit gets every row after
its own, in order."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.channels.writer import LogWriter
from terrarium.events import CreatureState
from terrarium.runtime.sessions import ensure_session_tables
from terrarium.serve.events import EventWriter, SessionEvents

pytestmark = pytest.mark.anyio


def _events(tmp_path: Path) -> tuple[SessionEvents, LogWriter, DurableLog]:
    log = DurableLog(tmp_path / "log.sqlite3")
    ensure_session_tables(log)
    shared = LogWriter(log)
    return SessionEvents("s" * 32, "run", log, EventWriter(log), shared), shared, log


def _state(name: str) -> CreatureState:
    return CreatureState(creature="echo", state=name)  # type: ignore[arg-type]


async def test_every_waiting_reader_is_woken_by_the_commit_and_a_later_one_waits(
        tmp_path: Path) -> None:
    ev, shared, log = _events(tmp_path)
    got: dict[str, list[int]] = {}

    async def reader(name: str, after: int) -> None:
        got[name] = [seq for seq, _, _ in await ev.wait(after)]

    with anyio.fail_after(20):  # (a reader never woken would hang the test)
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader, "a", 0)
            tg.start_soon(reader, "b", 0)
            await anyio.wait_all_tasks_blocked()
            ev.offer(_state("thinking"))
            ev.offer(_state("speaking"))
            shared.commit_now()
        assert got == {"a": [1, 2], "b": [1, 2]}
        async with anyio.create_task_group() as tg:  # a later reader: the next commit
            tg.start_soon(reader, "c", 2)
            await anyio.wait_all_tasks_blocked()
            assert "c" not in got
            ev.offer(_state("idle"))
            shared.commit_now()
        assert got["c"] == [3]
    # behind by more than the last commit: every row after its own, oldest first
    assert [seq for seq, _, _ in await ev.wait(0)] == [1, 2, 3]
    assert [seq for seq, _, _ in await ev.wait(1)] == [2, 3]
    log.close()


async def test_closing_wakes_the_waiting_readers_with_nothing(tmp_path: Path) -> None:
    ev, _, log = _events(tmp_path)
    got: list[list[tuple[int, str, str]]] = []

    async def reader() -> None:
        got.append(await ev.wait(0))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(reader)
            await anyio.wait_all_tasks_blocked()
            ev.close()
    assert got == [[], []]
    assert await ev.wait(0) == []  # closed: no wait at all
    log.close()
