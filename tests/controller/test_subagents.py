"""Sub-agents on the scripted model: nested delegation, the depth limit, limits and the
concurrency limiter, overrides, recording with a parent reference, and `terrarium log`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import yaml

from terrarium.config import load_single_creature
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.controller.subagent import Subagents, load_subagent
from terrarium.events import Event, SubagentEnded, SubagentStarted, TranscriptAppended
from terrarium.llm.base import ChatModel
from terrarium.llm.factory import make_model
from terrarium.tools.delegate import STATE_SUBAGENTS


def call(tool: str, /, **args: Any) -> str:
    body = "".join(f"@@{k}={v}\n" for k, v in args.items())
    return f"[/{tool}]\n{body}[{tool}/]"


def creature(root: Path, name: str, steps: list[Any], **config: Any) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    body = {"name": name, "controller": {"provider": "scripted", "script": "script.yaml"},
            "skill_mode": "static", **config}
    (folder / "config.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    (folder / "script.yaml").write_text(yaml.safe_dump({"steps": steps}), encoding="utf-8")
    return folder


def factory(parts: CreatureParts, label: str) -> ChatModel:
    return make_model(parts.settings, base_dir=parts.cdef.folder)


def controller(folder: Path, events: list[Event]) -> Controller:
    parts = assemble(load_single_creature(folder), folder.name)
    ctl = Controller(parts, factory(parts, parts.name), emit=events.append)
    ctl.tool_ctx.state[STATE_SUBAGENTS] = Subagents.for_parts(
        parts, make_model=factory, emit=events.append)
    return ctl


def turn(ctl: Controller, text: str) -> TurnResult:
    async def go() -> TurnResult:
        with anyio.fail_after(20):
            return await ctl.run_turn([Incoming(text=text)])

    return anyio.run(go)


def chain(tmp_path: Path, depth: int | None = None) -> Path:
    """lead → researcher → scout → deeper: the last hop is past the default depth of 2."""
    creature(tmp_path, "deeper", ["never reached"])
    creature(tmp_path, "scout", [
        {"match": "find the bird", "reply": call("deeper", task="go deeper")},
        {"match": "Result of deeper", "reply": "Scout: a heron, I looked myself."}],
        subagents={"deeper": "../deeper"})
    creature(tmp_path, "researcher", [
        {"match": "research birds", "reply": call("scout", task="find the bird")},
        {"match": "Result of scout", "reply": "Researcher: the scout saw a heron."}],
        subagents={"scout": "../scout"})
    extra = {"subagent_depth": depth} if depth else {}
    return creature(tmp_path, "lead", [
        {"match": "which bird", "reply": call("researcher", task="research birds")},
        {"match": "Result of researcher", "reply": "It was a heron."}],
        subagents={"researcher": "../researcher"}, **extra)


def test_nested_delegation_returns_each_final_answer_up_the_chain(tmp_path: Path) -> None:
    events: list[Event] = []
    ctl = controller(chain(tmp_path), events)
    result = turn(ctl, "which bird was it?")
    assert result.text == "It was a heron."
    assert result.calls[0].name == "researcher" and result.calls[0].ok
    assert result.calls[0].result == "Researcher: the scout saw a heron."
    started = [e for e in events if isinstance(e, SubagentStarted)]
    assert [(e.creature, e.subagent, e.depth) for e in started] == [
        ("lead", "researcher", 1), ("lead/researcher", "scout", 2)]
    assert started[0].parent_run is None and started[1].parent_run == started[0].run_id
    ended = {e.subagent: e for e in events if isinstance(e, SubagentEnded)}
    assert ended["researcher"].ok and ended["researcher"].run_id == started[0].run_id
    # the sub-agents' own transcripts are recorded under their nested names
    who = {e.creature for e in events if isinstance(e, TranscriptAppended)}
    assert who == {"lead", "lead/researcher", "lead/researcher/scout"}


def test_depth_limit_refuses_a_third_level(tmp_path: Path) -> None:
    events: list[Event] = []
    turn(controller(chain(tmp_path), events), "which bird was it?")
    scout_calls = [e.entry for e in events if isinstance(e, TranscriptAppended)
                   and e.creature == "lead/researcher/scout" and e.entry.kind == "tool_result"]
    assert len(scout_calls) == 1
    assert "sub-agents may nest only 2 deep" in scout_calls[0].text
    assert not any(isinstance(e, SubagentStarted) and e.subagent == "deeper" for e in events)


def test_a_deeper_limit_lets_the_third_level_run(tmp_path: Path) -> None:
    events: list[Event] = []
    lead = chain(tmp_path, depth=3)
    turn(controller(lead, events), "which bird was it?")
    started = [e.subagent for e in events if isinstance(e, SubagentStarted)]
    assert started == ["researcher", "scout", "deeper"]


def test_timeout_and_overrides(tmp_path: Path) -> None:
    creature(tmp_path, "slow", [{"reply": "late", "delay": 5}, "ok"])
    lead = creature(tmp_path, "lead", [
        call("slow", task="hurry"), {"match": "did not finish", "reply": "Too slow."}],
        subagents={"slow": {"config": "../slow", "timeout": 0.05}})
    events: list[Event] = []
    result = turn(controller(lead, events), "go")
    assert result.text == "Too slow."
    assert "did not finish within 0.05 s" in result.calls[0].result
    ended = [e for e in events if isinstance(e, SubagentEnded)]
    assert not ended[0].ok
    parts = load_subagent("slow", load_single_creature(lead).creatures["lead"]
                          .config.subagents["slow"].model_copy(update={
                              "max_iterations": 2, "max_tokens": 64,
                              "overrides": {"description": "a slow one"}}))
    assert parts.loop.max_iterations == 2 and parts.settings.max_tokens == 64
    assert parts.cdef.config.description == "a slow one"


def test_typed_inputs_are_arguments_of_the_call(tmp_path: Path) -> None:
    creature(tmp_path, "counter", [{"match": "count: 3", "reply": "three"}])
    lead = creature(tmp_path, "lead", [
        call("counter", task="count", count=3), "Done."],
        subagents={"counter": {"config": "../counter", "inputs": {"count": "int"}}})
    parts = assemble(load_single_creature(lead), "lead")
    assert set(parts.specs["counter"].args_model.model_fields) == {"task", "count"}
    result = turn(controller(lead, []), "go")
    assert result.calls[0].result == "three"


class Counting:
    """A model that counts how many sub-agent runs stream at once."""

    running = 0
    peak = 0

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.last_usage = None

    async def stream(self, request: Any) -> Any:
        Counting.running += 1
        Counting.peak = max(Counting.peak, Counting.running)
        try:
            for _ in range(20):  # stay a while, so runs that may overlap do
                await anyio.lowlevel.checkpoint()
            async for d in self.inner.stream(request):
                yield d
        finally:
            Counting.running -= 1


@pytest.mark.parametrize("limit", [1, 3])
def test_the_concurrency_limit_bounds_runs_at_once(tmp_path: Path, limit: int) -> None:
    creature(tmp_path, "w", [{"reply": "done", "repeat": True}])
    lead = creature(tmp_path, "lead", [
        "\n".join(call("w", task=f"job {i}") for i in range(3)), "All done."],
        subagents={"w": "../w"}, subagent_concurrency=limit)
    ctl = controller(lead, [])
    host = ctl.tool_ctx.state[STATE_SUBAGENTS]
    host.make_model = lambda parts, label: Counting(factory(parts, label))
    Counting.peak = 0
    result = turn(ctl, "go")
    assert [c.ok for c in result.calls] == [True, True, True]
    assert Counting.peak == limit


def test_unknown_subagent_config_is_a_config_error(tmp_path: Path) -> None:
    from terrarium.errors import ConfigErrors

    lead = creature(tmp_path, "lead", ["x"], subagents={"ghost": "../nowhere"})
    with pytest.raises(ConfigErrors, match="sub-agent config not found"):
        load_single_creature(lead)
