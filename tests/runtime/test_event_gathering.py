"""The event writer gathers a local run's events before writing them (issue 29: the writes
left the steps to the first audio): wait_idle still returns with every event written and
told ``on_event``, and a batch still gathering when the run ends is written. Deterministic:
the gathering time is set far longer than anything the test waits for otherwise."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.config import load_team
from terrarium.events import Event, TurnEnded
from terrarium.runtime import recording
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime

FIXTURES = Path(__file__).parents[1] / "runtime_fixtures"


def _logged_kinds(tmp_path: Path) -> list[str]:
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        return [e["kind"] for e in log.events(run.run_id)]


def test_wait_idle_returns_with_the_gathered_events_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recording, "EVENT_WRITE_WAIT", 0.5)  # > wait_idle's 30 ms settle
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", on_event=events.append)

    async def go() -> tuple[bool, list[str]]:
        async with TeamRuntime(load_team(FIXTURES / "trio"), opts) as rt:
            with anyio.fail_after(30):
                await rt.send_user("hello there")
                await rt.wait_idle()
            told = any(isinstance(e, TurnEnded) for e in events)
            return told, _logged_kinds(tmp_path)

    told, kinds = anyio.run(go)
    assert told and "turn_ended" in kinds


def test_a_batch_still_gathering_when_the_run_ends_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recording, "EVENT_WRITE_WAIT", 60.0)  # never over before the end
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none")

    async def go() -> None:
        async with TeamRuntime(load_team(FIXTURES / "trio"), opts) as rt:
            with anyio.fail_after(30), rt.bus.subscribe() as sub:
                await rt.send_user("hello there")
                async for ev in sub:  # the first turn's end, published but not yet written
                    if isinstance(ev, TurnEnded):
                        break

    anyio.run(go)  # not 60 s: the end cuts the gathering short
    assert "turn_ended" in _logged_kinds(tmp_path)
