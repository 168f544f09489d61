"""Inputs first (runtime/gate.py ``TurnGate.inputs_first``, used by serve's
``SessionManager.send``): while inputs are being handled no turn steps, and a computing
turn gives way; bounded, so held inputs never stop the turns; a burst of inputs shares its
commits. Turns woken by the framework (``Supervisor.wake``) wait in the same line. Orders
of steps and counts are asserted, never times."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
import yaml

from terrarium.config import load_team
from terrarium.llm.scripted import ScriptedModel
from terrarium.runtime.gate import TurnGate
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.serve import ServeSettings, create_app
from tests.gate_helpers import Computing, computing
from tests.serve_helpers import write_echo_team

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the gate drives coroutines as asyncio's Task does


async def _until(cond: object) -> None:
    with anyio.fail_after(10):  # a hang guard, not a timing
        while not cond():  # type: ignore[operator]
            await anyio.lowlevel.checkpoint()


async def test_a_computing_turn_gives_way_while_inputs_are_handled() -> None:
    gate = TurnGate(1, defer_limit=3600)  # the bound never comes into it here
    log: list[str] = []

    async def inputs() -> None:
        await _until(lambda: "t2" in log)  # the turn is computing
        with gate.inputs_first():
            for i in range(5):  # the inputs' own steps (reads, commits: several trips)
                log.append(f"r{i}")
                await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, computing(log, "t", 10))
        tg.start_soon(inputs)
    first, last = log.index("r0"), log.index("r4")
    assert not [x for x in log[first:last] if x[0] == "t"], log  # no turn step among them
    assert [x for x in log if x[0] == "t"] == [f"t{i}" for i in range(10)]  # then it went on
    assert gate.deferred >= 1 and gate.holding == 0 and not gate.waiting


async def test_no_turn_starts_while_inputs_are_handled() -> None:
    gate = TurnGate(2, defer_limit=3600)
    log: list[str] = []
    done = anyio.Event()

    async def inputs() -> None:
        with gate.inputs_first():
            for i in range(6):
                log.append(f"r{i}")
                await anyio.lowlevel.checkpoint()
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(inputs)
        await _until(lambda: "r0" in log)
        tg.start_soon(gate.run, computing(log, "a", 2))  # both in line, though the
        tg.start_soon(gate.run, computing(log, "b", 2))  # limit would let them in
        await done.wait()
    assert log[:6] == [f"r{i}" for i in range(6)], log
    assert sorted(log[6:]) == ["a0", "a1", "b0", "b1"]


async def test_inputs_that_never_end_hold_the_turns_back_only_so_long() -> None:
    """The bound: inputs under way all the time (one never ends) slow the turns down, but
    every turn still finishes (a hang guard, no timing: the bound is a thousandth of a
    second here)."""
    gate = TurnGate(1, defer_limit=0.001)
    log: list[str] = []
    stop = anyio.Event()

    async def endless_input() -> None:
        with gate.inputs_first():
            await stop.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(endless_input)
        await _until(lambda: gate.inputs == 1)
        with anyio.fail_after(20):
            async with anyio.create_task_group() as turns:
                turns.start_soon(gate.run, computing(log, "a", 5))
                turns.start_soon(gate.run, computing(log, "b", 5))
        stop.set()
    assert sorted(log) == sorted([f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)])
    assert gate.deferred >= 2 and gate.holding == 0 and not gate.waiting


async def test_a_turn_cancelled_while_inputs_go_first_leaks_nothing() -> None:
    gate = TurnGate(1, defer_limit=3600)
    log: list[str] = []
    async with anyio.create_task_group() as tg:
        with gate.inputs_first():
            tg.start_soon(gate.run, computing(log, "a", 3))
            await _until(lambda: len(gate.waiting) == 1)
            tg.cancel_scope.cancel()
    assert log == [] and gate.holding == 0 and not gate.waiting and gate.inputs == 0


async def test_a_turn_started_by_a_turns_task_waits_in_line() -> None:
    """A task a turn starts (a background job, whose end wakes its creature) runs turns
    of its own: they wait in line like any other (not the outer turn's, as a turn inside
    the same task is)."""
    gate = TurnGate(1)
    log: list[str] = []

    async def outer() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, computing(log, "job", 2))  # a new task: in line
            await computing(log, "o", 4)  # still computing: the gate stays with it
            await gate.run(computing(log, "inner", 1))  # the same task: the outer's turn
        # leaving the task group waits for the job's turn: the gate goes to it

    await gate.run(outer())
    assert log == ["o0", "o1", "o2", "o3", "inner0", "job0", "job1"], log
    assert gate.holding == 0 and not gate.waiting


# ---------------------------------------------------------------------- through serve
async def test_a_burst_of_inputs_takes_no_turn_step_and_shares_its_commits(
        tmp_path: Path) -> None:
    counter = [0]
    team = write_echo_team(tmp_path / "team", history_turns=2)
    app = create_app(load_team(team), ServeSettings(
        runs_dir=tmp_path / "runs", rate=1e6, warm_up=False, turns_at_once=1),
        models={"echo": Computing(counter, steps=300)})
    mgr = app.state.manager
    mgr.gate.defer_limit = 3600  # the bound (a slow machine) never comes into it here
    burst = 12
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        ids = [mgr.create(None).id for _ in range(burst + 3)]
        lives = [await mgr.load(sid) for sid in ids]
        for live in lives[:3]:  # three sessions' turns computing (and in line)
            await mgr.send(live, text="busy")
        await _until(lambda: counter[0] > 20)
        commits = mgr.log_writer.commits
        afters: list[int] = []
        steps: list[int] = []  # the turns' step count as each input starts and ends

        async def one(live: object) -> None:
            steps.append(counter[0])
            afters.append(await mgr.send(live, text="hello"))  # type: ignore[arg-type]
            steps.append(counter[0])

        async with anyio.create_task_group() as g:
            for live in lives[3:]:
                g.start_soon(one, live)
        during = max(steps) - min(steps)
        shared = mgr.log_writer.commits - commits
        for live in lives[3:]:  # each input's first event committed before its answer
            assert live.events.committed > live.events.last_seq - 12
        tg.cancel_scope.cancel()
    assert during <= 1, during  # (without inputs first: a turn step on each of its trips)
    assert shared <= 3, shared  # the messages' commit and the events' (not 2 per input)
    assert len(afters) == burst


def _wake_team(tmp_path: Path) -> Path:
    folder = tmp_path / "team"
    for name in ("echo", "watch"):
        (folder / name).mkdir(parents=True)
        (folder / name / "script.yaml").write_text('default_reply: "noted"\n')
        (folder / name / "config.yaml").write_text(yaml.safe_dump(
            {"name": name, "controller": {"provider": "scripted", "script": "script.yaml"}}),
            encoding="utf-8")
    (folder / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "wakers", "input_channel": "inbox",
        "creatures": [{"name": "echo", "config": "echo", "channels": {"listen": ["inbox"]}},
                      {"name": "watch", "config": "watch"}],  # no inbox: woken directly
        "channels": {"inbox": {"type": "queue"}}}}), encoding="utf-8")
    return folder


async def test_a_woken_creatures_turn_waits_in_line(tmp_path: Path) -> None:
    """``Supervisor.wake`` of a creature without an inbox (a trigger, a job's result) runs
    its turn through the gate: while another turn computes, it does not start."""
    gate = TurnGate(1)
    model = ScriptedModel(default_reply="noted")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"echo": ScriptedModel(default_reply="x"), "watch": model},
                          turn_gate=gate)
    release = anyio.Event()

    async def holder() -> None:  # a turn that computes until told to stop
        while not release.is_set():
            await anyio.lowlevel.checkpoint()

    async with TeamRuntime(load_team(_wake_team(tmp_path)), opts) as rt:
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, holder())
            await _until(lambda: gate.holding == 1)
            tg.start_soon(rt.wake, "watch", "trigger", "tick", {"text": "wake up"})
            await _until(lambda: len(gate.waiting) == 1)  # the woken turn, in line
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert model.requests == []  # it has not started
            release.set()
        with anyio.fail_after(20):
            await rt.wait_idle()
    assert len(model.requests) == 1
    assert gate.holding == 0 and not gate.waiting
