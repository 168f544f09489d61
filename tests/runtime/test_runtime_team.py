"""Teams through TeamRuntime on the scripted model: delivery, the durable log, output wiring,
supervision. No test times anything; waits are bounded only so a bug fails instead of hangs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.config import load_team
from terrarium.errors import PromptError
from terrarium.events import CreatureState, Event, Restart
from terrarium.llm.scripted import ScriptedModel
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, Supervision, TeamRuntime

FIXTURES = Path(__file__).parents[1] / "runtime_fixtures"


def run_team(
    name: str,
    tmp_path: Path,
    drive: Callable[[TeamRuntime], Awaitable[None]],
    **options: Any,
) -> tuple[TeamRuntime, list[Event]]:
    team = load_team(FIXTURES / name)
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", on_event=events.append,
                          **options)

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                await drive(rt)
                await rt.wait_idle()
        return rt

    return anyio.run(go), events


def open_log(tmp_path: Path) -> DurableLog:
    return DurableLog(tmp_path / "runs" / LOG_FILE)


async def say(rt: TeamRuntime, text: str = "hello there") -> None:
    await rt.send_user(text)


def test_three_creatures_end_to_end(tmp_path: Path) -> None:
    rt, _ = run_team("trio", tmp_path, say)
    texts = {name: r.text for name, r in rt.results}
    assert texts["c"] == "All done: greeted twice."
    assert [c.name for c in dict(rt.results)["b"].calls] == ["memory_write", "send_done"]
    with open_log(tmp_path) as log:
        assert log.run(rt.run_id).status == "completed"
        msgs = log.messages(rt.run_id)
        assert [(e.channel, e.sender, r) for e, r in msgs] == [
            ("inbox", "user", ("a",)), ("work", "a", ("b",)), ("done", "b", ("c",))]
        assert msgs[1][0].payload == {"task": "greet", "n": 2}
        for env, receivers in msgs:
            for r in receivers:
                assert env.id in log.consumed_ids(rt.run_id, r)
        turns = log.turns(rt.run_id)
        assert sorted(t.creature for t in turns) == ["a", "b", "c"]
        assert all(t.error is None and t.prefix_hash for t in turns)
        by = {t.creature: t for t in turns}
        assert by["a"].calls[0]["name"] == "send_work" and by["a"].calls[0]["ok"]
        assert by["c"].outputs == {"text": "All done: greeted twice."}
        assert by["b"].prompt_tokens > 0
        # b's turn text was only calls: nothing that looks like call syntax is its output
        assert by["b"].outputs == {}
    assert rt.statuses["b"].turns == 1 and rt.statuses["b"].state == "idle"


def test_output_wiring_delivers_turn_end_text(tmp_path: Path) -> None:
    rt, _ = run_team("relay", tmp_path, lambda rt: say(rt, "ping"))
    texts = dict(rt.results)
    assert texts["c"].text == "c heard pong-42."
    with open_log(tmp_path) as log:
        msgs = log.messages(rt.run_id)
    assert [(e.channel, e.sender, e.payload) for e, _ in msgs] == [
        ("inbox", "user", {"text": "ping"}),
        ("relay", "a", {"text": "b, please answer ping-42."}),
        ("report", "b", {"text": "pong-42 from b."}),
    ]


def test_creature_failing_twice_is_restarted_and_the_team_completes(tmp_path: Path) -> None:
    flaky = ScriptedModel([{"fault": "error"}, {"fault": "error"},
                           {"match": "sheep", "reply": "b counted, at last."}])
    sup = Supervision(max_failures=3, base_delay=0.01, max_delay=0.02)
    rt, events = run_team("fanout", tmp_path, lambda rt: say(rt, "go"),
                          models={"b": flaky}, supervision=sup)
    texts = {n: r.text for n, r in rt.results}
    assert texts == {"b": "b counted, at last.", "c": "c counted the sheep."} | {"a": ""}
    restarts = [e for e in events if isinstance(e, Restart)]
    assert [(e.creature, e.attempt) for e in restarts] == [("b", 1), ("b", 2)]
    states = [e.state for e in events if isinstance(e, CreatureState) and e.creature == "b"]
    assert states.count("restarting") == 2 and "failed" not in states
    assert rt.statuses["b"].restarts == 2 and rt.statuses["b"].state == "idle"
    assert len(flaky.requests) == 3
    with open_log(tmp_path) as log:
        turns = [t for t in log.turns(rt.run_id) if t.creature == "b"]
        assert [t.error is not None for t in turns] == [True, True, False]
        assert "ModelError" in (turns[0].error or "")
        work = next(e for e, _ in log.messages(rt.run_id) if e.channel == "work")
        assert work.id in log.consumed_ids(rt.run_id, "b")
        logged = log.events(rt.run_id)
        assert [(e["creature"], e["attempt"]) for e in logged if e["kind"] == "restart"] == [
            ("b", 1), ("b", 2)]
        assert [e["state"] for e in logged if e["kind"] == "creature_state"
                and e["creature"] == "b"].count("restarting") == 2


def test_creature_that_keeps_failing_is_marked_failed_and_the_rest_finish(
    tmp_path: Path,
) -> None:
    broken = ScriptedModel([{"fault": "error", "repeat": True}])
    sup = Supervision(max_failures=3, base_delay=0.01, max_delay=0.02)
    rt, events = run_team("fanout", tmp_path, lambda rt: say(rt, "go"),
                          models={"b": broken}, supervision=sup)
    assert rt.statuses["b"].state == "failed"
    assert "ModelError" in (rt.statuses["b"].last_error or "")
    assert dict(rt.results)["c"].text == "c counted the sheep."
    assert "b" not in dict(rt.results)
    assert len(broken.requests) == 3
    restarts = [e for e in events if isinstance(e, Restart) and e.creature == "b"]
    assert len(restarts) == 2  # the third failure gives up instead of restarting
    assert any(isinstance(e, CreatureState) and e.creature == "b" and e.state == "failed"
               for e in events)
    with open_log(tmp_path) as log:
        work = next(e for e, _ in log.messages(rt.run_id) if e.channel == "work")
        assert work.id in log.consumed_ids(rt.run_id, "c")
        # a failed creature did not consume its message: a resume could still deliver it
        assert work.id not in log.consumed_ids(rt.run_id, "b")
        assert [m.id for m in log.unconsumed(rt.run_id, "b")] == [work.id]
        # issue 12: a run in which a creature ended failed is not "completed"
        assert log.run(rt.run_id).status == "degraded"


@pytest.mark.parametrize("team", ["trio", "relay"])
def test_every_message_is_consumed_once_per_receiver(tmp_path: Path, team: str) -> None:
    text = "ping" if team == "relay" else "hello"
    rt, _ = run_team(team, tmp_path, lambda rt: say(rt, text))
    with open_log(tmp_path) as log:
        for env, receivers in log.messages(rt.run_id):
            for r in receivers:
                assert env.id in log.consumed_ids(rt.run_id, r)
            assert log.unconsumed(rt.run_id, env.sender) == []
        rows = log._query("SELECT message_id, receiver, count(*) FROM consumptions"
                          " WHERE run_id=? GROUP BY message_id, receiver", (rt.run_id,))
        assert rows and all(n == 1 for _, _, n in rows)


def test_a_creature_that_cannot_start_fails_the_start_instead_of_hanging(
    tmp_path: Path,
) -> None:
    team = load_team(FIXTURES / "tiny_window")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none")

    async def go() -> None:
        with anyio.fail_after(20):
            async with TeamRuntime(team, opts):
                pytest.fail("the team started although its prompt cannot fit")

    with pytest.raises(PromptError, match="leaves nothing of the 256-token context window"):
        anyio.run(go)
    with open_log(tmp_path) as log:
        [run] = log.runs()
        assert run.status == "failed"
