"""Triggers through TeamRuntime on the scripted model: startup, timer, cron, idle, and a
trigger on a named channel. Time is a ManualTime the test moves; nothing sleeps on it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.config import load_team
from terrarium.config.models import TriggerConfig
from terrarium.events import Event, TriggerFired
from terrarium.llm.scripted import ScriptedModel
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.runtime.triggers import ManualTime, next_cron

START = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def make_team(tmp_path: Path, triggers: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "team"
    (folder / "watch").mkdir(parents=True)
    (folder / "watch" / "config.yaml").write_text(yaml.safe_dump(
        {"name": "watch", "triggers": triggers}), encoding="utf-8")
    (folder / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "watchers", "input_channel": "inbox",
        "creatures": [{"name": "watch", "config": "watch", "channels": {"listen": ["inbox"]}}],
        "channels": {"inbox": {"type": "queue"}}}}), encoding="utf-8")
    return folder


class Seen:
    """What the run has shown so far: the test reads it between moves of the clock."""

    def __init__(self) -> None:
        self.model = ScriptedModel(default_reply="noted")
        self.events: list[Event] = []


def run(tmp_path: Path, triggers: list[dict[str, Any]],
        drive: Callable[[TeamRuntime, ManualTime], Awaitable[None]], seen: Seen | None = None,
        ) -> tuple[ScriptedModel, list[Event]]:
    team = load_team(make_team(tmp_path, triggers))
    seen = seen or Seen()
    model, events = seen.model, seen.events
    clock = ManualTime(START)
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"watch": model}, on_event=events.append, trigger_time=clock)

    async def go() -> None:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(20):
                await rt.wait_idle()
                await drive(rt, clock)
                await rt.wait_idle()

    anyio.run(go)
    return model, events


def fired(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.trigger, e.trigger_type) for e in events if isinstance(e, TriggerFired)]


def inputs(model: ScriptedModel) -> list[str]:
    return [next(m.content or "" for m in reversed(r.messages) if m.role == "user")
            for r in model.requests]


async def nothing(rt: TeamRuntime, clock: ManualTime) -> None:
    return None


def test_startup_trigger_fires_once_at_start(tmp_path: Path) -> None:
    model, events = run(tmp_path, [{"type": "startup", "text": "good morning"}], nothing)
    assert fired(events) == [("startup", "startup")]
    assert inputs(model) == ["[trigger from startup]\ntext: good morning"]


def test_timer_fires_every_n_seconds_of_test_time(tmp_path: Path) -> None:
    async def drive(rt: TeamRuntime, clock: ManualTime) -> None:
        await clock.advance(9.5)
        await rt.wait_idle()
        assert fired(seen.events) == []
        await clock.advance(0.5)
        await rt.wait_idle()
        assert fired(seen.events) == [("tick", "timer")]
        await clock.advance(10)
        await rt.wait_idle()

    seen = Seen()
    team = [{"type": "timer", "every": 10, "name": "tick", "text": "tick"}]
    model, events = run(tmp_path, team, drive, seen)
    assert fired(events) == [("tick", "timer"), ("tick", "timer")]
    assert inputs(model) == ["[trigger from tick]\ntext: tick"] * 2


def test_cron_fires_on_its_schedule(tmp_path: Path) -> None:
    first = next_cron("*/5 * * * *", START)
    assert first - START == 100  # 22:15:00 UTC
    seen: list[int] = []

    async def drive(rt: TeamRuntime, clock: ManualTime) -> None:
        await clock.advance(99)
        await rt.wait_idle()
        seen.append(len(inputs(seen_.model)))
        await clock.advance(1)
        await rt.wait_idle()
        seen.append(len(inputs(seen_.model)))
        await clock.advance(300)  # the next one, five minutes on
        await rt.wait_idle()

    seen_ = Seen()
    _, events = run(tmp_path, [{"type": "cron", "cron": "*/5 * * * *"}], drive, seen_)
    assert seen == [0, 1]
    assert fired(events) == [("cron", "cron"), ("cron", "cron")]


def test_idle_fires_after_quiet_and_input_resets_it(tmp_path: Path) -> None:
    counts: list[int] = []

    async def drive(rt: TeamRuntime, clock: ManualTime) -> None:
        await clock.advance(20)
        await rt.send_user("still here")  # input: the idle clock starts again
        await rt.wait_idle()
        await clock.advance(20)
        await rt.wait_idle()
        counts.append(len(seen_.model.requests))  # only the user's turn so far
        await clock.advance(10)
        await rt.wait_idle()
        counts.append(len(seen_.model.requests))

    seen_ = Seen()
    model, events = run(tmp_path, [{"type": "idle", "after": 30, "text": "anyone?"}], drive,
                        seen_)
    assert counts == [1, 2]
    assert inputs(model) == ["[inbox from user]\ntext: still here",
                             "[trigger from idle]\ntext: anyone?"]
    assert fired(events) == [("idle", "idle")]


def test_a_trigger_can_send_on_a_named_channel(tmp_path: Path) -> None:
    model, events = run(tmp_path, [{"type": "startup", "channel": "inbox", "text": "hi"}],
                        nothing)
    assert inputs(model) == ["[inbox from trigger]\ntext: hi"]
    sent = [e for e in events if type(e).__name__ == "MessageSent"]
    assert [(e.channel, e.sender) for e in sent] == [("inbox", "trigger")]  # type: ignore[attr-defined]


def test_trigger_configs_are_checked() -> None:
    with pytest.raises(ValueError, match="needs `every`"):
        TriggerConfig.model_validate({"type": "timer"})
    with pytest.raises(ValueError, match="not a cron expression"):
        TriggerConfig.model_validate({"type": "cron", "cron": "every tuesday"})
