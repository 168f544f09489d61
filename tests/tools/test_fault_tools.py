"""A tool cannot take the process down: SystemExit, KeyboardInterrupt and other
BaseExceptions become the tool's error result; synchronous tool code runs in a thread, so
it cannot freeze the event loop; ``--timeout`` ends a run within 1 s of its deadline (exit
124) even while a tool blocks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import anyio
import pytest
from pydantic import BaseModel

from terrarium.channels.log import DurableLog
from terrarium.runtime.runtime import LOG_FILE
from terrarium.tools.base import NoArgs, Tool, ToolContext
from terrarium.tools.runner import run_tool

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


class Raises(Tool):
    name = "raises"
    summary = "raise what it is told"
    args_model = NoArgs
    exc: ClassVar[BaseException] = SystemExit(2)

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        raise self.exc


class SyncSleep(Tool):
    name = "sync_sleep"
    summary = "block for a while in plain code"
    args_model = NoArgs

    def run(self, args: BaseModel, ctx: ToolContext) -> str:  # type: ignore[override]
        time.sleep(0.5)
        return "slept"


class SyncRaises(Tool):
    name = "sync_raises"
    summary = "sys.exit from plain code"
    args_model = NoArgs

    def run(self, args: BaseModel, ctx: ToolContext) -> str:  # type: ignore[override]
        raise SystemExit("bye")


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(creature="t", cwd=tmp_path)


@pytest.mark.parametrize("exc", [SystemExit(2), KeyboardInterrupt(), GeneratorExit(),
                                 BaseExceptionGroup("many", [SystemExit(1)])])
def test_a_base_exception_in_a_tool_is_its_error_result(tmp_path: Path,
                                                        exc: BaseException) -> None:
    tool = type("T", (Raises,), {"exc": exc})
    res = anyio.run(run_tool, tool, {}, ctx(tmp_path))
    assert not res.ok
    assert res.text.startswith(f"The tool raises failed unexpectedly: {type(exc).__name__}")


def test_sys_exit_in_synchronous_tool_code_is_its_error_result(tmp_path: Path) -> None:
    res = anyio.run(run_tool, SyncRaises, {}, ctx(tmp_path))
    assert (res.ok, res.text) == (False, "The tool sync_raises failed unexpectedly: "
                                         "SystemExit: bye")


def test_cancellation_still_stops_a_tool(tmp_path: Path) -> None:
    async def go() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await run_tool(SyncSleep, {}, ctx(tmp_path))
        return scope.cancelled_caught

    started = time.monotonic()
    assert anyio.run(go)
    assert time.monotonic() - started < 0.4  # the wait was abandoned, not sat out


def test_synchronous_tool_code_does_not_freeze_the_event_loop(tmp_path: Path) -> None:
    ticks: list[float] = []

    async def go() -> str:
        async with anyio.create_task_group() as tg:
            async def tick() -> None:
                while True:
                    ticks.append(time.monotonic())
                    await anyio.sleep(0.02)

            tg.start_soon(tick)
            res = await run_tool(SyncSleep, {}, ctx(tmp_path))
            tg.cancel_scope.cancel()
        return res.text

    assert anyio.run(go) == "slept"
    assert len(ticks) >= 10  # the loop kept running while the tool slept 0.5 s


def _run(fixture: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(FIXTURES / fixture), "--input", "go",
         "--audio", "none", *extra], cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False)
    return res, time.monotonic() - started


def test_system_exit_in_a_tool_does_not_end_the_run(tmp_path: Path) -> None:
    res, _ = _run("fault_quit", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "solo> The tool failed; I am still here." in res.stdout
    with DurableLog(tmp_path / LOG_FILE) as log:
        [run] = log.runs()
        assert run.status == "completed"
        [turn] = log.turns(run.run_id)
        assert turn.calls[0]["result"] == "The tool quit failed unexpectedly: SystemExit: 3"


@pytest.mark.parametrize("fixture", ["fault_sync_stall", "fault_stall"])
def test_timeout_ends_a_run_within_a_second_while_a_tool_blocks(tmp_path: Path,
                                                                fixture: str) -> None:
    # the tool sleeps 20 s; sync code runs in a thread (the run stops cleanly), while an
    # async def that blocks the loop is ended by the watchdog (exit 124, log resumable)
    quick, startup = _run("solo", "--runs-dir", str(tmp_path / "q"))
    assert quick.returncode == 0, quick.stderr
    res, took = _run(fixture, "--runs-dir", str(tmp_path / "s"), "--timeout", "2")
    assert res.returncode == 124, res.stderr
    assert "--timeout 2 s reached" in res.stdout + res.stderr
    assert took < startup + 2 + 1 + 1.0  # startup, the deadline, 1 s, slack for a busy box
    # either way the run is recorded as ended by its timeout, never left "running"
    with DurableLog(tmp_path / "s" / LOG_FILE) as log:
        [run] = log.runs()
        assert (run.status, run.ended is not None) == ("timeout", True)
