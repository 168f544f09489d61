"""Pilot tests: approvals and ``ask_user`` questions answered in the monitor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from textual.widgets import Input, Static

from terrarium.config import load_any
from terrarium.events import ApprovalDecided
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tui import MonitorApp, MonitorHuman
from terrarium.tui.human import ApprovalScreen, QuestionScreen

GUARDED = Path(__file__).parents[1] / "runtime_fixtures" / "guarded"

pytestmark = pytest.mark.anyio


@pytest.fixture
def human() -> MonitorHuman:
    return MonitorHuman()


@pytest.fixture
async def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  human: MonitorHuman) -> AsyncIterator[TeamRuntime]:
    (tmp_path / "ws").mkdir()
    monkeypatch.setenv("GUARDED_WORKSPACE", str(tmp_path / "ws"))
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                          approver=human.approve, answerer=human.answer)
    async with TeamRuntime(load_any(GUARDED), opts) as rt:  # type: ignore[arg-type]
        yield rt


async def wait_for_screen(pilot, kind: type) -> None:  # type: ignore[no-untyped-def]
    """Until a ``kind`` screen is on top and mounted with its widgets: a pushed screen
    composes after the push, so querying it at once raced under load."""
    with anyio.fail_after(10):
        while not (isinstance(pilot.app.screen, kind) and pilot.app.screen.is_mounted):
            await pilot.pause(0.05)
        await pilot.pause()


async def test_approve_in_the_monitor(runtime: TeamRuntime, human: MonitorHuman,
                                      tmp_path: Path) -> None:
    decided: list[ApprovalDecided] = []
    app = MonitorApp(runtime, human=human, deterministic=True)
    async with app.run_test(size=(100, 30)) as pilot:
        with runtime.bus.subscribe(64) as sub:
            async with anyio.create_task_group() as tg:
                results = []

                async def turn() -> None:
                    results.append(await runtime.ask("guarded", "make a file"))

                tg.start_soon(turn)
                await wait_for_screen(pilot, ApprovalScreen)
                screen = pilot.app.screen
                title = str(screen.query_one("#approval-title", Static).render())
                args = str(screen.query_one("#approval-args", Static).render())
                assert title == "guarded wants to call shell"
                assert args == "$ echo made > made.txt && echo the-command-ran"
                await pilot.press("y")
            decided = [e for e in sub.drain() if isinstance(e, ApprovalDecided)]
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
    [result] = results
    assert result.calls[0].ok and "the-command-ran" in result.calls[0].result
    assert (tmp_path / "ws" / "made.txt").exists()
    assert [(d.approved, d.by) for d in decided] == [(True, "monitor")]


async def test_deny_with_a_reason_in_the_monitor(runtime: TeamRuntime, human: MonitorHuman,
                                                 tmp_path: Path) -> None:
    app = MonitorApp(runtime, human=human, deterministic=True)
    async with app.run_test(size=(100, 30)) as pilot:
        async with anyio.create_task_group() as tg:
            results = []

            async def turn() -> None:
                results.append(await runtime.ask("guarded", "make a file"))

            tg.start_soon(turn)
            await wait_for_screen(pilot, ApprovalScreen)
            await pilot.pause()
            await pilot.press("r")  # to the reason field
            await pilot.pause()
            assert pilot.app.screen.query_one("#approval-reason", Input).has_focus
            await pilot.press(*"use a temp dir", "enter")  # enter in the reason denies
    [result] = results
    call = result.calls[0]
    assert not call.ok
    assert call.result == "Not run: the call to shell was not approved (use a temp dir)."
    assert not (tmp_path / "ws" / "made.txt").exists()


async def test_answer_a_question_in_the_monitor(runtime: TeamRuntime,
                                                human: MonitorHuman) -> None:
    app = MonitorApp(runtime, human=human, deterministic=True)
    async with app.run_test(size=(100, 30)) as pilot:
        async with anyio.create_task_group() as tg:
            results = []

            async def turn() -> None:
                results.append(await runtime.ask("guarded", "pick a colour"))

            tg.start_soon(turn)
            await wait_for_screen(pilot, QuestionScreen)
            title = str(pilot.app.screen.query_one("#question-title", Static).render())
            assert title == "guarded asks: Which colour?"
            await pilot.press(*"blue", "enter")
    assert results[0].calls[0].result == "The user answered: blue"


async def test_closing_the_monitor_refuses_what_still_waits(
    runtime: TeamRuntime, human: MonitorHuman, tmp_path: Path
) -> None:
    app = MonitorApp(runtime, human=human, deterministic=True)
    results = []
    async with anyio.create_task_group() as tg:

        async def turn() -> None:
            results.append(await runtime.ask("guarded", "make a file"))

        async with app.run_test(size=(100, 30)) as pilot:
            tg.start_soon(turn)
            await wait_for_screen(pilot, ApprovalScreen)
            await app.action_quit()
    call = results[0].calls[0]
    assert not call.ok and "the monitor was closed" in call.result
    assert not (tmp_path / "ws" / "made.txt").exists()
