"""Pilot tests of the monitor's part of the run experience (issue 25): the composer offers
an enum's values and refuses an empty required field; an approval of an edit shows a
diff; the monitor opens before the team has started and shows its start as progress."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from textual.widgets import Select, Static

from terrarium.config import load_any
from terrarium.events import CreatureWarmed, CreatureWarming, ModelLoaded, ModelLoading, TeamReady
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tools.preview import call_preview
from terrarium.tui import MonitorApp, MonitorHuman
from terrarium.tui.composer import ComposeScreen
from terrarium.tui.human import ApprovalScreen
from terrarium.tui.launch import run_team_with_monitor
from terrarium.tui.start_progress import StartProgress

FIXTURES = Path(__file__).parents[1] / "runtime_fixtures"

pytestmark = pytest.mark.anyio


@pytest.fixture
async def alerts(tmp_path: Path) -> AsyncIterator[TeamRuntime]:
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none")
    async with TeamRuntime(load_any(FIXTURES / "alerts"), opts) as rt:  # type: ignore[arg-type]
        yield rt


def error_of(screen: ComposeScreen) -> str:
    return str(screen.query_one("#compose-error", Static).render())


async def test_the_composer_offers_an_enums_values_and_wants_required_fields(
        alerts: TeamRuntime) -> None:
    app = MonitorApp(alerts, deterministic=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ComposeScreen)
        screen.query_one("#compose-channel", Select).value = "alerts"
        await pilot.pause()
        choose = screen.field_select("priority")  # a choice, not a free-text box
        assert [o[1] for o in choose._options if isinstance(o[1], str)] == ["low", "high"]
        assert error_of(screen) == "Required fields 'text', 'priority' are empty."
        screen.field_input("text").focus()
        await pilot.press(*"Server down")
        await pilot.pause()
        assert error_of(screen) == "Required field 'priority' is empty."
        await pilot.press("ctrl+s")  # refused before sending: the screen stays
        await pilot.pause()
        assert app.screen is screen
        choose.value = "high"
        await pilot.pause()
        assert error_of(screen) == "✓ ready to send"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is not screen
        with anyio.fail_after(10):
            await alerts.wait_idle()
    heard = [e.text for e in alerts.transcript("pager") if e.kind == "message_in"]
    assert heard == ["[alerts from user]\ntext: Server down\npriority: high"]


async def test_an_edit_waiting_for_approval_shows_as_a_diff(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shop.py").write_text("def total(price):\n    return price * 0.9\n")
    monkeypatch.setenv("EDITOR_WORKSPACE", str(ws))
    human = MonitorHuman()
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", approver=human.approve,
                          answerer=human.answer)
    async with TeamRuntime(load_any(FIXTURES / "editor"), opts) as rt:  # type: ignore[arg-type]
        app = MonitorApp(rt, human=human, deterministic=True)
        async with app.run_test(size=(100, 30)) as pilot:
            async with anyio.create_task_group() as tg:
                tg.start_soon(rt.ask, "editor", "fix the rounding")
                with anyio.fail_after(10):
                    while not (isinstance(app.screen, ApprovalScreen)
                               and app.screen.is_mounted):
                        await pilot.pause(0.05)
                await pilot.pause()
                shown = str(app.screen.query_one("#approval-args", Static).render())
                assert shown.splitlines() == [
                    "--- a/shop.py", "+++ b/shop.py", "@@ -1 +1 @@",
                    "-return price * 0.9", "+return round(price * 0.9, 2)"]
                assert "old_string" not in shown  # the diff, not the raw JSON
                await pilot.press("y")
    assert "return round(price * 0.9, 2)" in (ws / "shop.py").read_text()


def test_previews_of_other_calls() -> None:
    assert call_preview("shell", {"command": "pytest -x", "timeout": 30}) == (
        "$ pytest -x\n  (timeout: 30)")
    assert call_preview("write_file", {"path": "a.txt", "content": "one\ntwo"}) == (
        "write a.txt (2 lines):\n+one\n+two")
    assert call_preview("multi_edit", {"path": "f", "edits": [
        {"old_string": "a", "new_string": "b"}]}).splitlines()[0] == "edit 1 of 1"
    assert call_preview("lookup", {"q": "x"}) == '{\n  "q": "x"\n}'


def test_start_progress_reads_as_one_line() -> None:
    now = [0.0]
    p = StartProgress(lambda: now[0])
    assert p.line() == "starting the team ... (0 s since start)"
    now[0] = 1.0
    assert p.feed([ModelLoading(model="SmolLM2", slots=2)])
    now[0] = 4.0
    assert p.line() == "loading model SmolLM2: 3 s ... (4 s since start)"
    p.feed([ModelLoaded(model="SmolLM2", seconds=3.0),
            CreatureWarming(creature="router", prefix_tokens=1598)])
    now[0] = 6.0
    assert p.line() == "warming router (prefix ~1,598 tokens): 2 s ... (6 s since start)"
    p.feed([CreatureWarmed(creature="router", seconds=2.0), TeamReady(seconds=6.2)])
    assert p.line() == "ready in 6.2 s"


async def test_the_monitor_opens_before_the_team_has_started(tmp_path: Path) -> None:
    """The app is up while the team is still starting: its header says so, and once the
    team has started its creatures are shown and the progress ends with `ready`."""
    team = load_any(FIXTURES / "alerts")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none")
    seen: list[tuple[str, str]] = []
    gate = anyio.Event()

    class SlowStart(TeamRuntime):
        async def __aenter__(self) -> TeamRuntime:
            await gate.wait()  # the model is "loading": the monitor must be up already
            return await super().__aenter__()

    async def drive(app: MonitorApp) -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            seen.append((app.sub_title, str(app.query_one("#notice", Static).render())))
            gate.set()
            with anyio.fail_after(10):
                while app.sub_title == "starting" or "ready" not in str(
                        app.query_one("#notice", Static).render()):
                    await pilot.pause(0.05)
            seen.append((app.sub_title, str(app.query_one("#notice", Static).render())))
            await pilot.press("q")

    made: list[MonitorApp] = []
    original = MonitorApp.run_async

    async def run_async(self: MonitorApp, **kw: object) -> int | None:
        made.append(self)
        await drive(self)
        return 0

    MonitorApp.run_async = run_async  # type: ignore[method-assign]
    try:
        code = await run_team_with_monitor(team, lambda t: SlowStart(t, opts))  # type: ignore[arg-type]
    finally:
        MonitorApp.run_async = original  # type: ignore[method-assign]
    assert code == 0
    assert seen[0][0] == "starting" and seen[0][1].startswith("starting the team")
    rid = made[0].handle.run_id
    assert seen[1][0] == rid and seen[1][1].startswith("ready in ")
