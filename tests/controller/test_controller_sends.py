"""Typed sends from the controller loop through a real hub and durable log.

The parser already checks arguments against the channel schema, so to see what happens
when the *hub* refuses, these tests hand-build the creature's parts with a looser call
model (or an extra send the wiring does not allow): the refusal must come back to the model
as a "Refused: ..." result in its next request and be recorded as refused in the log.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.config import Team, load_team
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.formats import CallSpec, get_format
from terrarium.llm.scripted import ScriptedModel

TRIO = Path(__file__).parents[1] / "runtime_fixtures" / "trio"


class LooseWork(BaseModel):
    """What the model is allowed to write; the channel's real schema wants an int ``n``."""

    model_config = ConfigDict(extra="forbid")

    task: str
    n: str


def loosen(parts: CreatureParts, extra_sends: dict[str, str] | None = None) -> CreatureParts:
    specs = dict(parts.fmt.specs)
    specs["send_work"] = CallSpec("send_work", "loose", LooseWork)
    sends = dict(parts.sends)
    for call, channel in (extra_sends or {}).items():
        specs[call] = CallSpec(call, "not wired", specs["send_work"].args_model)
        sends[call] = channel
    fmt = get_format("bracket", list(specs.values()))
    return dataclasses.replace(parts, fmt=fmt, sends=sends)


def make_hub(team: Team, log: DurableLog) -> ChannelHub:
    specs = [ChannelSpec(name=c.name, kind=c.type, description=c.description,
                         schema_name=c.message_type.name if c.message_type else "",
                         validator=c.message_type.model if c.message_type else None,
                         capacity=c.capacity)
             for c in team.channels.values()]
    wirings = [CreatureWiring(name=c.name, listen=c.listen, can_send=c.can_send)
               for c in team.creatures.values()]
    return ChannelHub(specs, wirings, log=log, terrarium_name=team.name)


def run_a(tmp_path: Path, steps: list[Any], extra: dict[str, str] | None = None
          ) -> tuple[TurnResult, ScriptedModel, DurableLog, str]:
    team = load_team(TRIO)
    parts = loosen(assemble(team, "a"), extra)
    model = ScriptedModel(steps)
    log = DurableLog(tmp_path / "log.sqlite3")

    async def go() -> tuple[TurnResult, str]:
        async with make_hub(team, log) as hub:

            async def send(channel: str, payload: dict[str, Any]) -> int:
                return (await hub.send("a", channel, payload)).count

            ctl = Controller(parts, model, send=send)
            with anyio.fail_after(20):
                result = await ctl.run_turn([Incoming(text="hello team")])
            return result, hub.run_id

    result, run_id = anyio.run(go)
    return result, model, log, run_id


def last_user(model: ScriptedModel, i: int) -> str:
    msgs = model.requests[i].messages
    return next(m.content or "" for m in reversed(msgs) if m.role == "user")


def test_schema_mismatch_is_refused_back_to_the_model_and_logged(tmp_path: Path) -> None:
    steps = [
        {"match": "hello", "reply": "[/send_work]\n@@task=greet\n@@n=many\n[send_work/]"},
        {"match": "Refused", "reply": "I will fix the number."},
    ]
    result, model, log, run_id = run_a(tmp_path, steps)
    rec = result.calls[0]
    assert (rec.name, rec.kind, rec.ok) == ("send_work", "send", False)
    assert rec.result.startswith("Refused: ")
    assert "does not match the schema" in rec.result and "'work'" in rec.result
    assert "n" in rec.result
    seen = last_user(model, 1)
    assert "Result of send_work: Refused: " in seen
    refusals = log.refusals(run_id)
    assert [(r.sender, r.channel) for r in refusals] == [("a", "work")]
    assert "does not match the schema" in refusals[0].reason
    assert refusals[0].payload == {"task": "greet", "n": "many"}
    assert log.messages(run_id) == []  # nothing refused was delivered or logged as sent
    assert result.text == "I will fix the number."
    log.close()


def test_send_outside_can_send_is_refused(tmp_path: Path) -> None:
    steps = [
        {"match": "hello", "reply": "[/send_done]\n@@task=x\n@@n=1\n[send_done/]"},
        {"match": "Refused", "reply": "Understood."},
    ]
    result, model, log, run_id = run_a(tmp_path, steps, {"send_done": "done"})
    assert result.calls[0].result.startswith("Refused: Creature 'a' may not send on channel")
    assert "it may send on: work" in last_user(model, 1)
    assert [r.channel for r in log.refusals(run_id)] == ["done"]
    log.close()


def test_valid_send_is_delivered_and_needs_no_follow_up(tmp_path: Path) -> None:
    steps = [{"match": "hello", "reply": "[/send_work]\n@@task=greet\n@@n=2\n[send_work/]"}]
    result, model, log, run_id = run_a(tmp_path, steps)
    rec = result.calls[0]
    assert rec.ok and rec.result == "Sent on work to 1 listener."
    assert result.rounds == 1 and len(model.requests) == 1
    [(env, receivers)] = log.messages(run_id)
    assert (env.channel, env.sender, receivers) == ("work", "a", ("b",))
    assert env.payload == {"task": "greet", "n": 2}
    assert log.refusals(run_id) == []
    log.close()
