"""The turn gate (runtime/gate.py): at most ``limit`` turns compute at once; a turn that
waits lets the next one in; a checkpoint keeps the gate; tasks outside it (requests) step
between a turn's steps; cancellation in line leaks nothing. Orders of steps are asserted,
never times."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from terrarium.runtime.gate import TurnGate
from tests.gate_helpers import computing

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the gate drives coroutines as asyncio's Task does


async def test_one_turn_computes_at_a_time_and_requests_step_between() -> None:
    gate = TurnGate(1)
    log: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, computing(log, "a", 4))
        tg.start_soon(gate.run, computing(log, "b", 4))
        tg.start_soon(computing, log, "r", 4)  # a request: not a turn, never in line
    turns = [x for x in log if x[0] != "r"]
    assert turns == ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"]  # b waited for a
    # the request stepped while a computed, not after it
    assert log.index("r1") < log.index("a3")
    assert gate.holding == 0 and not gate.waiting


async def test_without_the_gate_turns_interleave() -> None:
    """The contrast: the same turns ungated step in turn (what made requests wait)."""
    log: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(computing, log, "a", 3)
        tg.start_soon(computing, log, "b", 3)
    assert log[:4] == ["a0", "b0", "a1", "b1"]


async def test_a_waiting_turn_lets_the_next_in_and_all_make_progress() -> None:
    """limit + 1 turns that each wait on their model (an answer that comes only once
    every one of them asked): a gate held while waiting would never let the last ask."""
    limit = 2
    gate = TurnGate(limit)
    asked: list[int] = []
    everyone_asked = anyio.Event()
    done: list[int] = []

    async def turn(n: int) -> int:
        await anyio.lowlevel.checkpoint()
        asked.append(n)
        if len(asked) == limit + 1:
            everyone_asked.set()
        await everyone_asked.wait()  # the model's answer
        done.append(n)
        return n * 10

    results: list[int] = []

    async def run(n: int) -> None:
        results.append(await gate.run(turn(n)))

    with anyio.fail_after(10):  # a hang guard, not a timing
        async with anyio.create_task_group() as tg:
            for n in range(limit + 1):
                tg.start_soon(run, n)
    assert sorted(done) == [0, 1, 2] and sorted(results) == [0, 10, 20]
    assert gate.handoffs >= limit and gate.holding == 0  # the first two waited


async def test_at_most_limit_turns_hold_it() -> None:
    gate = TurnGate(2)
    inside = [0]
    most = [0]

    async def turn() -> None:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        inside[0] -= 1

    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(gate.run, turn())
    assert most[0] == 2


async def test_cancelled_in_line_leaks_nothing_and_errors_pass_through() -> None:
    gate = TurnGate(1)
    release = anyio.Event()
    holding = anyio.Event()
    reached: list[str] = []

    async def holder() -> None:
        holding.set()
        while not release.is_set():  # computing (checkpoints keep the gate)
            await anyio.lowlevel.checkpoint()

    async def queued() -> None:
        reached.append("queued ran")  # never: it is cancelled while in line

    async def in_line() -> None:
        await gate.run(queued())

    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, holder())
        await holding.wait()
        async with anyio.create_task_group() as inner:
            inner.start_soon(in_line)
            inner.start_soon(in_line)
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
            assert len(gate.waiting) == 2 and gate.holding == 1
            inner.cancel_scope.cancel()
        assert not gate.waiting and gate.holding == 1
        release.set()
    assert reached == []
    assert gate.holding == 0 and not gate.waiting

    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError("the turn's own error")

    with pytest.raises(ValueError, match="the turn's own error"):
        await gate.run(fails())
    assert gate.holding == 0

    async def answers() -> str:
        await anyio.lowlevel.checkpoint()
        return "answer"

    assert await gate.run(answers()) == "answer"
    assert gate.holding == 0


async def test_a_turn_cancelled_while_it_waits_is_told_at_once() -> None:
    gate = TurnGate(1)
    told: list[str] = []

    async def waits_forever() -> None:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            told.append("cancelled")
            raise

    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, waits_forever())
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert told == ["cancelled"] and gate.holding == 0 and not gate.waiting


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        TurnGate(0)
