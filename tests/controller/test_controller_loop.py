"""The controller loop on the scripted model: rounds, calls, notices, errors, concurrency.

Each test builds a one-creature team from a config written to a temp folder, assembles its
parts exactly as the runtime does, and drives ``Controller.run_turn`` directly; the scripted
model records every request, so what the model was told is checked from the prompts it got.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.errors import ModelError
from terrarium.llm.scripted import ScriptedModel
from terrarium.store import MemoryStore
from tests.loop_helpers import TOOLS, call, last_user, make_parts, request_text, run
from tests.runtime_fixtures.tools import Ordered, Rendezvous, Shout


def test_plain_answer_is_one_round(tmp_path: Path) -> None:
    model = ScriptedModel([{"match": "capital", "reply": "Paris."}])
    ctl = Controller(make_parts(tmp_path), model)
    result = run(ctl, "What is the capital of France?")
    assert result.text == "Paris."
    assert result.rounds == 1 and result.calls == []
    assert len(model.requests) == 1
    assert "What is the capital of France?" in last_user(model.requests[0])
    assert result.prefix_hash and not result.hit_max_iterations


def test_tool_result_feeds_a_second_round(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"])
    model = ScriptedModel([
        {"match": "sky", "reply": "Let me check.\n" + call("lookup", label="sky")},
        {"match": "fact-sky", "reply": "The sky is green, says the fact."},
    ])
    result = run(Controller(parts, model), "What colour is the sky?")
    assert result.rounds == 2
    assert [(c.name, c.kind, c.ok) for c in result.calls] == [("lookup", "tool", True)]
    assert result.calls[0].args == {"label": "sky"}
    second = last_user(model.requests[1])
    assert "Result of lookup: fact-sky: the sky is green" in second
    assert result.text == "The sky is green, says the fact."


def test_final_text_is_plain_text_not_the_calls(tmp_path: Path) -> None:
    """A turn whose last round is only calls ends with the text said before, never call syntax."""
    parts = make_parts(tmp_path, tools=["memory_write"])
    model = ScriptedModel([call("memory_write", text="remember the milk")])
    with MemoryStore(tmp_path / "mem.sqlite3") as memory:
        result = run(Controller(parts, model, memory=memory), "note it")
    assert result.calls[0].ok, result.calls[0].result
    assert result.calls and result.calls[0].name == "memory_write"
    assert "[/memory_write]" not in result.text
    assert result.text == ""


def test_info_always_leads_to_a_follow_up_round(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=["info", f"{TOOLS}:Lookup"], skill_mode="dynamic")
    model = ScriptedModel([
        {"match": "how", "reply": call("info", name="lookup")},
        {"match": "Result of info", "reply": "Now I know how lookup works."},
    ])
    result = run(Controller(parts, model), "how do I look things up?")
    assert result.rounds == 2
    assert result.calls[0].name == "info" and result.calls[0].needs_followup
    fed_back = last_user(model.requests[1])
    assert "lookup: Look up a fact by label." in fed_back
    assert "Returns the fact stored under a label." in fed_back
    assert "- label (str, required)" in fed_back
    assert result.text == "Now I know how lookup works."


def test_acknowledgement_only_round_ends_the_turn(tmp_path: Path) -> None:
    """The contrast to info: a write whose result is only an acknowledgement needs no round."""
    parts = make_parts(tmp_path, tools=["memory_write"])
    model = ScriptedModel([call("memory_write", text="x"), "never asked"])
    with MemoryStore(tmp_path / "mem.sqlite3") as memory:
        result = run(Controller(parts, model, memory=memory), "remember x")
    assert result.calls[0].ok and not result.calls[0].needs_followup
    assert result.rounds == 1 and len(model.requests) == 1


def test_unknown_call_name_comes_back_as_a_notice(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"])
    model = ScriptedModel([
        {"match": "go", "reply": "Trying.\n" + call("teleport", where="moon")},
        {"reply": "Sorry, I cannot teleport."},
    ])
    result = run(Controller(parts, model), "go to the moon")
    assert result.rounds == 2
    assert result.calls == []
    assert result.notices and "'teleport' is not a known call" in result.notices[0]
    second = request_text(model.requests[1])
    assert "'teleport' is not a known call" in second
    assert "lookup" in result.notices[0]  # the notice names the calls that do exist
    # the notice is one-shot: it is not repeated in later requests
    assert "'teleport' is not a known call" not in request_text(model.requests[0])
    assert result.text == "Sorry, I cannot teleport."


@pytest.mark.parametrize(("label", "expected"), [
    ("typed", "the fuse 'typed' is wet"),
    ("other", "kaboom"),
])
def test_tool_error_comes_back_as_a_result(tmp_path: Path, label: str, expected: str) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Explode"])
    model = ScriptedModel([
        {"match": "boom", "reply": call("explode", label=label)},
        {"match": "Result of explode", "reply": "That failed; I will stop."},
    ])
    result = run(Controller(parts, model), "boom please")
    rec = result.calls[0]
    assert (rec.name, rec.kind, rec.ok, rec.needs_followup) == ("explode", "tool", False, True)
    assert expected in rec.result
    assert expected in last_user(model.requests[1])
    assert result.text == "That failed; I will stop."


def test_invalid_arguments_come_back_as_a_result(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Shout"])
    model = ScriptedModel([
        {"match": "yell", "reply": call("shout", loud="maybe")},
        {"match": "Result of shout", "reply": "I used a bad flag."},
    ])
    Shout.received = []
    result = run(Controller(parts, model), "yell")
    assert result.calls[0].kind == "invalid" and not result.calls[0].ok
    assert "loud" in last_user(model.requests[1])
    assert Shout.received == []  # the tool never ran with a bad argument


@pytest.mark.parametrize(("raw", "value"), [("false", False), ("true", True),
                                            ("False", False), ("no", False)])
def test_bool_argument_text_converts(tmp_path: Path, raw: str, value: bool) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Shout"])
    model = ScriptedModel([call("shout", loud=raw, word="hey"), "done"])
    Shout.received = []
    result = run(Controller(parts, model), "say hey")
    assert Shout.received == [(value, "hey")]
    assert type(Shout.received[0][0]) is bool
    assert result.calls[0].args == {"loud": value, "word": "hey"}
    assert result.calls[0].result == ("HEY" if value else "hey")


def test_safe_tools_run_in_parallel_unsafe_ones_in_order(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Rendezvous", f"{TOOLS}:Ordered"])
    reply = "\n".join([
        call("step", label="s1"), call("meet", label="m1"), call("step", label="s2"),
        call("meet", label="m2"), call("step", label="s3"), call("meet", label="m3"),
    ])
    model = ScriptedModel([reply, "all done"])
    Ordered.reset()

    async def go() -> TurnResult:
        Rendezvous.reset(expected=3)
        with anyio.fail_after(20):
            return await Controller(parts, model).run_turn([Incoming(text="work")])

    result = anyio.run(go)
    # the three safe calls were inside run() together: a serial loop could never meet
    assert Rendezvous.peak == 3
    assert sorted(Rendezvous.arrived) == ["m1", "m2", "m3"]
    # the unsafe calls never overlapped and kept the order they were written in
    assert Ordered.peak == 1
    assert Ordered.events == ["start s1", "end s1", "start s2", "end s2", "start s3", "end s3"]
    # records keep call order whatever order the calls finished in
    assert [c.args["label"] for c in result.calls] == ["s1", "m1", "s2", "m2", "s3", "m3"]
    assert all(c.ok for c in result.calls)
    results = last_user(model.requests[1]).splitlines()
    assert results[0] == "Result of step: did s1"
    assert results[1] == "Result of meet: m1 met 3"


def test_max_iterations_stops_the_loop(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"], max_iterations=3)
    model = ScriptedModel([{"reply": call("lookup", label="again"), "repeat": True}])
    result = run(Controller(parts, model), "loop forever")
    assert result.hit_max_iterations
    assert result.rounds == 3 and len(model.requests) == 3
    assert len(result.calls) == 3


def test_conversation_carries_over_between_turns(tmp_path: Path) -> None:
    model = ScriptedModel([{"match": "one", "reply": "First answer."},
                           {"match": "two", "reply": "Second answer."}])
    ctl = Controller(make_parts(tmp_path), model)
    run(ctl, "turn one")
    result = run(ctl, "turn two")
    assert result.text == "Second answer."
    second = request_text(model.requests[1])
    assert "turn one" in second and "First answer." in second
    assert model.requests[0].messages[0] == model.requests[1].messages[0]  # stable prefix


@pytest.mark.parametrize("fault", ["error", "truncate"])
def test_model_failure_raises_the_model_error_itself(tmp_path: Path, fault: str) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"])
    model = ScriptedModel([{"reply": "Half a sentence and more", "fault": fault}])
    with pytest.raises(ModelError, match="as scripted"):
        run(Controller(parts, model), "anything")
