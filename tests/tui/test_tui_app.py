"""Pilot tests of the monitor on a real TeamRuntime driving scripted models."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from textual.widgets import DataTable, Static, TabbedContent

from terrarium.config import Team, load_team
from terrarium.runtime.runtime import RuntimeOptions, Supervision, TeamRuntime
from terrarium.tui import MonitorApp
from terrarium.tui.composer import ComposeScreen
from terrarium.tui.creature_view import TranscriptView
from terrarium.tui.team_panel import TeamPanel

FIXTURE = Path(__file__).parents[1] / "tui_fixtures" / "team"

pytestmark = pytest.mark.anyio


@pytest.fixture
def team() -> Team:
    return load_team(FIXTURE)


@pytest.fixture
async def runtime(team: Team, tmp_path: Path) -> AsyncIterator[TeamRuntime]:
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                          # the first restart waits ~60 s (max_delay too: 8 s by default),
                          # so a failed creature stays "restarting" while a test looks
                          supervision=Supervision(max_failures=3, base_delay=60.0,
                                                  max_delay=60.0),
                          clock=lambda: datetime(2025, 1, 1, 12, 0))
    async with TeamRuntime(team, opts) as rt:
        yield rt


def cells(table: DataTable) -> list[list[str]]:  # type: ignore[type-arg]
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def traffic_rows(app: MonitorApp) -> list[str]:
    table = app.query_one("#traffic-table", DataTable)
    return [" | ".join(row) for row in cells(table)]


def transcript_lines(app: MonitorApp) -> list[str]:
    view = app.query_one(TranscriptView)
    out = []
    for w in view.query(Static):
        if w.id != "streaming":
            out.append(str(w.render()))
    return out


async def settle(pilot, rt: TeamRuntime) -> None:  # type: ignore[no-untyped-def]
    await rt.wait_idle()
    for _ in range(4):
        await pilot.pause(0.12)  # let the monitor take its next event batch


async def test_select_creature_send_input_see_traffic_and_transcript(
    runtime: TeamRuntime,
) -> None:
    app = MonitorApp(runtime, deterministic=True)
    async with app.run_test(size=(120, 40)) as pilot:
        team_rows = cells(app.query_one(TeamPanel))
        assert [r[0] for r in team_rows] == ["greeter", "scribe"]
        assert all(r[1] == "idle" for r in team_rows)

        await pilot.press("s")
        await pilot.press(*"hello there")
        await pilot.press("enter")
        await settle(pilot, runtime)

        rows = traffic_rows(app)
        assert any("user → user_input → greeter" in r and "hello there" in r for r in rows), rows
        assert any("greeter → notes → scribe" in r and "priority=1 topic=a greeting" in r
                   for r in rows), rows
        team_rows = cells(app.query_one(TeamPanel))
        assert team_rows[0][3] == "1" and team_rows[1][3] == "1"  # one turn each

        # select the scribe in the team table: the creature tab opens on its transcript
        app.query_one(TeamPanel).focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "creature"
        lines = transcript_lines(app)
        assert any("a greeting" in line for line in lines), lines
        assert any("Filed the note." in line for line in lines), lines

        # the filter keeps only rows involving the named channel or creature
        await pilot.press("slash", *"notes")
        await pilot.pause()
        rows = traffic_rows(app)
        assert rows and all("notes" in r for r in rows), rows


async def test_invalid_message_shows_inline_error_and_is_not_sent(
    runtime: TeamRuntime,
) -> None:
    app = MonitorApp(runtime, deterministic=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ComposeScreen)
        screen.query_one("#compose-channel").value = "notes"
        await pilot.pause()
        screen.field_input("topic").focus()
        await pilot.press(*"lunch")
        await pilot.pause()
        error = str(screen.query_one("#compose-error", Static).render())
        assert "priority" in error and "required" in error.lower(), error

        await pilot.press("ctrl+s")  # refused before sending: the screen stays
        await pilot.pause()
        assert app.screen is screen
        assert not any("notes" in r for r in traffic_rows_of(app))

        screen.field_input("priority").focus()
        await pilot.press(*"two")
        await pilot.pause()
        error = str(screen.query_one("#compose-error", Static).render())
        assert "priority" in error and "JSON" in error, error

        await pilot.press("backspace", "backspace", "backspace", "2")
        await pilot.pause()
        assert "ready" in str(screen.query_one("#compose-error", Static).render())
        await pilot.press("ctrl+s")
        await settle(pilot, runtime)
        assert app.screen is not screen
        rows = traffic_rows(app)
        assert any("user → notes → scribe" in r and "priority=2 topic=lunch" in r
                   for r in rows), rows


def traffic_rows_of(app: MonitorApp) -> list[str]:
    return traffic_rows(app)


async def test_failing_creature_shows_restarting(runtime: TeamRuntime) -> None:
    app = MonitorApp(runtime, deterministic=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", *"boom", "enter")
        # wait for the panel itself to show it (the failed turn, then the monitor's next
        # event batch), however long a loaded machine takes, up to a minute
        with anyio.fail_after(60):
            while True:
                await pilot.pause(0.05)
                rows = cells(app.query_one(TeamPanel))
                greeter = next(r for r in rows if r[0] == "greeter")
                if greeter[1].startswith("restarting"):
                    break
        assert greeter[1].startswith("restarting"), rows
        assert "↻1" in greeter[1]
