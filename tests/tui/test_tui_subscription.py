"""The monitor's event subscription lives as long as one run of the app, not the app."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import anyio
import pytest
from textual.pilot import Pilot

from terrarium.config import load_team
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tui import MonitorApp

FIXTURE = Path(__file__).parents[1] / "tui_fixtures" / "team"

pytestmark = pytest.mark.anyio


def make_runtime(tmp_path: Path) -> TeamRuntime:
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                          clock=lambda: datetime(2025, 1, 1, 12, 0))
    return TeamRuntime(load_team(FIXTURE), opts)


def subscribers(rt: TeamRuntime) -> int:
    return len(rt.bus._subs)


def test_an_app_built_and_never_run_holds_no_subscription(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path)
    before = subscribers(rt)
    app = MonitorApp(rt, deterministic=True)
    assert subscribers(rt) == before
    assert app._sub is None


async def test_run_test_subscribes_for_the_run_and_leaves_after(tmp_path: Path) -> None:
    async with make_runtime(tmp_path) as rt:
        before = subscribers(rt)
        app = MonitorApp(rt, deterministic=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert subscribers(rt) == before + 1
        assert subscribers(rt) == before
        assert app._sub is None


async def test_run_async_subscribes_before_its_first_await(tmp_path: Path) -> None:
    """``terrarium run --tui`` starts the team in a task beside ``run_async``: the
    subscription must exist when that task first runs, and be gone when the app returns."""
    async with make_runtime(tmp_path) as rt:
        before = subscribers(rt)
        app = MonitorApp(rt, deterministic=True)
        seen: dict[str, int] = {}

        async def beside() -> None:  # runs at run_async's first suspension
            seen["beside"] = subscribers(rt)

        async def look_and_quit(pilot: Pilot[int]) -> None:
            await pilot.pause()
            seen["running"] = subscribers(rt)
            app.exit(0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(beside)
            assert await app.run_async(headless=True, size=(80, 24),
                                       auto_pilot=look_and_quit) == 0
        assert seen == {"beside": before + 1, "running": before + 1}
        assert subscribers(rt) == before
