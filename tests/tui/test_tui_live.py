"""The monitor following a distributed run live from a real nats-server (tui/live.py), and
``terrarium monitor --broker``'s choices: live, replay, the list of runs, no broker.

The run's batches are published by the test while the monitor runs; every wait is on a
condition the monitor reaches (fail_after is a safety net, never what decides).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.widgets import DataTable, Input, Static

import terrarium.cli.inspect as inspect_cmd
import terrarium.tui.launch as tui_launch
from terrarium.channels.log import RunInfo
from terrarium.channels.nats.follow import follow_run
from terrarium.cli.command import main
from terrarium.events import CreatureState, TranscriptAppended, TranscriptEntry
from terrarium.tui import MonitorApp, ReplayHandle
from terrarium.tui.live import READ_ONLY_LIVE, LiveRunHandle
from terrarium.tui.team_panel import TeamPanel
from tests.live_run import T0, hand_run
from tests.nats_fixtures import NatsServer, free_port

RELAY = Path(__file__).parents[1] / "runtime_fixtures" / "relay"


def _state(creature: str, state: str, i: int) -> CreatureState:
    return CreatureState(ts=T0 + i, creature=creature, state=state)  # type: ignore[arg-type]


def states(app: MonitorApp) -> dict[str, str]:
    table: DataTable[Any] = app.query_one(TeamPanel)
    rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    return {r[0]: r[1] for r in rows}


async def until(pilot: Any, cond: Callable[[], bool]) -> None:
    """Let the monitor run until ``cond`` holds (the caller's fail_after bounds it)."""
    while not cond():
        await pilot.pause(0.05)


def _info(run_id: str = "R1") -> RunInfo:
    return RunInfo(run_id=run_id, terrarium="relay", path=str(RELAY), started=T0, ended=None,
                   status="running")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_monitor_shows_a_creature_change_state_live(
        nats_server: NatsServer, tmp_path: Path, anyio_backend: str) -> None:
    async with hand_run(nats_server.url, path=str(RELAY)) as (run, js):
        await run.events([_state("a", "thinking", 1)])
        handle = LiveRunHandle(_info(), tmp_path)
        app = MonitorApp(handle, deterministic=True)
        with anyio.fail_after(30):
            async with app.run_test(size=(120, 40)) as pilot, anyio.create_task_group() as tg:
                tg.start_soon(handle.follow, follow_run(js, run.run_id, run.terrarium,
                                                        idle=0.2))
                await until(pilot, lambda: states(app).get("a") == "thinking")
                assert app.sub_title == "live"
                assert states(app) == {"a": "thinking", "b": "idle", "c": "idle"}
                assert app.read_only and not app.query_one("#say", Input).display

                # the run goes on while the monitor watches: a finishes, b takes over
                entry = TranscriptEntry(kind="assistant", text="pong-42", ts=T0 + 2)
                await run.events([TranscriptAppended(ts=T0 + 2, creature="a", entry=entry),
                                  _state("a", "idle", 3), _state("b", "thinking", 4)])
                await until(pilot, lambda: states(app).get("b") == "thinking")
                assert states(app)["a"] == "idle"
                assert [e.text for e in handle.transcript("a")] == ["pong-42"]

                await run.end("completed")
                notice = app.query_one("#notice", Static)
                await until(pilot, lambda: "The run ended" in str(notice.render()))
                assert "completed" in str(notice.render())
                assert app.sub_title == "ended (completed)"
                assert handle.ended == "completed"
                assert app.is_running  # it stays open on what it saw
                tg.cancel_scope.cancel()


def test_a_live_handle_refuses_to_send(tmp_path: Path) -> None:
    handle = LiveRunHandle(_info(), tmp_path)
    assert handle.check_payload("inbox", {"text": "hi"}) == READ_ONLY_LIVE


def test_monitor_with_an_unreachable_broker_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(inspect_cmd, "CONNECT_DEADLINE", 1.0)
    url = f"nats://127.0.0.1:{free_port()}"
    assert main(["monitor", "R1", "--broker", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: could not connect to the NATS broker at {url}")
    assert err.count("\n") == 1 and "Traceback" not in err


def _runs(url: str, statuses: dict[str, str]) -> None:
    async def go() -> None:
        async with hand_run(url) as (run, _js):
            for rid, status in statuses.items():
                run.run_id = rid
                await run.announce(status)

    anyio.run(go)


def test_monitor_without_a_run_id_lists_the_runs_unless_one_is_running(
        nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _runs(nats_server.url, {"R1": "running", "R2": "running"})
    assert main(["monitor", "--broker", nats_server.url]) == 0
    out = capsys.readouterr().out
    assert "R1  running" in out and "R2  running" in out and "2 runs are running" in out

    followed: list[str] = []

    async def fake_live(handle: LiveRunHandle, batches: Any) -> int:
        followed.append(handle.run_id)
        return 0

    monkeypatch.setattr(tui_launch, "run_live_monitor", fake_live)
    _runs(nats_server.url, {"R2": "completed"})
    assert main(["monitor", "--broker", nats_server.url]) == 0
    assert followed == ["R1"]  # the only running run, followed live


def test_monitor_on_a_finished_run_replays_it(nats_server: NatsServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    async def go() -> None:
        async with hand_run(nats_server.url, path=str(RELAY)) as (run, _js):
            await run.events([_state("a", "thinking", 1), _state("a", "idle", 2)])
            await run.end("completed")

    anyio.run(go)
    opened: list[Any] = []

    async def fake_run(self: MonitorApp) -> int:
        opened.append(self.handle)
        return 0

    monkeypatch.setattr(MonitorApp, "run_async", fake_run)
    assert main(["monitor", "R1", "--broker", nats_server.url]) == 0
    (handle,) = opened
    assert isinstance(handle, ReplayHandle) and handle.total == 2
    assert handle.run.status == "completed"
