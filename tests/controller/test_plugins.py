"""Lifecycle plugins on the scripted model: every hook, editing, veto, isolation, ordering,
and the two shipped plugins (tool budget, redactor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from terrarium.config.models import LifecyclePluginConfig
from terrarium.controller.loop import Controller
from terrarium.controller.plugins import Redactor, load_plugins
from terrarium.errors import ConfigError
from terrarium.events import Event, PluginFailed
from terrarium.llm.scripted import ScriptedModel
from tests.loop_helpers import call, last_user, make_parts, run
from tests.runtime_fixtures.plugins import Order, Recorder

TOOLS = "tests.runtime_fixtures.tools"
PLUGINS = "tests.runtime_fixtures.plugins"


def test_every_hook_is_called_and_may_edit(tmp_path: Path) -> None:
    Recorder.seen.clear()
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"],
                       plugins=[{"module": f"{PLUGINS}:Recorder", "options": {"tag": "TAG-1"}}])
    model = ScriptedModel([
        {"match": "TAG-1", "reply": call("lookup", label="sky")},
        {"match": "TAG-1", "reply": "Done."},
    ])
    result = run(Controller(parts, model), "what colour?")
    hooks = [h for h, _ in Recorder.seen]
    # a call starts as soon as it closes, while the model still streams: its hooks come
    # before the round's after_model
    assert hooks == ["on_message", "before_model", "before_tool", "after_tool", "after_model",
                     "before_model", "after_model", "on_turn_end"]
    assert Recorder.seen[0] == ("on_message", "what colour?")
    assert Recorder.seen[2] == ("before_tool", ("lookup", {"label": "sky"}))
    # the edited request is what the model got; the edited result is what it read back
    assert model.requests[0].messages[-1].content == "TAG-1"
    assert "Result of lookup: FACT-SKY: THE SKY IS GREEN" in last_user(_without_tag(model, 1))
    assert result.calls[0].result == "FACT-SKY: THE SKY IS GREEN"
    assert Recorder.seen[-1] == ("on_turn_end", "Done.")


def _without_tag(model: ScriptedModel, i: int) -> Any:
    req = model.requests[i]
    return req.model_copy(update={"messages": req.messages[:-1]})


def test_a_veto_is_the_result_the_model_reads(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"],
                       plugins=[{"module": f"{PLUGINS}:Veto", "options": {"deny": ["lookup"]}}])
    model = ScriptedModel([call("lookup", label="sky"), {"match": "Vetoed", "reply": "OK."}])
    result = run(Controller(parts, model), "go")
    assert not result.calls[0].ok
    assert result.calls[0].result == "Vetoed by veto: lookup is not allowed today"
    assert "Result of lookup: Vetoed by veto: lookup is not allowed today" in last_user(
        model.requests[1])
    assert result.text == "OK."


@pytest.mark.parametrize(("cls", "error"), [("Crash", "RuntimeError"), ("Quit", "SystemExit"),
                                           ("Interrupt", "KeyboardInterrupt")])
def test_a_crashing_plugin_is_isolated_and_recorded(tmp_path: Path, cls: str,
                                                    error: str) -> None:
    """Whatever it raises, sys.exit and Ctrl-C's exception included: a plugin's failure is
    the plugin's, like a tool's, and the turn goes on."""
    Recorder.seen.clear()
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"], plugins=[
        {"module": f"{PLUGINS}:{cls}", "priority": 1, "name": "crash"},
        {"module": f"{PLUGINS}:Recorder"}])
    events: list[Event] = []
    model = ScriptedModel([call("lookup", label="sky"), "Fine."])
    result = run(Controller(parts, model, emit=events.append), "go")
    assert result.text == "Fine." and result.calls[0].ok
    failed = [(e.plugin, e.hook) for e in events if isinstance(e, PluginFailed)]
    assert failed == [("crash", "on_message"), ("crash", "before_model"),
                      ("crash", "before_tool"), ("crash", "after_tool"),
                      ("crash", "after_model"), ("crash", "before_model"),
                      ("crash", "after_model"), ("crash", "on_turn_end")]
    assert all(e.error.startswith(f"{error}: ") and "boom" in e.error
               for e in events if isinstance(e, PluginFailed))
    # the plugin after it still ran every hook
    assert len(Recorder.seen) == 8


def test_plugins_run_by_priority_then_name() -> None:
    Order.calls.clear()
    cfgs = [LifecyclePluginConfig(module=f"{PLUGINS}:Order", name=n, priority=p)
            for n, p in [("b", 5), ("a", 5), ("z", 1), ("c", 10)]]
    assert [p.name for p in load_plugins(cfgs)] == ["z", "a", "b", "c"]


def test_bad_plugin_references_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="neither a shipped plugin"):
        load_plugins([LifecyclePluginConfig(module="nope")])
    with pytest.raises(ConfigError, match="cannot be loaded"):
        load_plugins([LifecyclePluginConfig(module="tests.nowhere:X")])
    with pytest.raises(ConfigError, match="is not a terrarium"):
        load_plugins([LifecyclePluginConfig(module=f"{TOOLS}:Lookup")])
    with pytest.raises(ConfigError, match="declared twice"):
        load_plugins([LifecyclePluginConfig(module="tool_budget"),
                      LifecyclePluginConfig(module="tool_budget")])
    with pytest.raises(ConfigError, match="refused its options"):
        load_plugins([LifecyclePluginConfig(module="tool_budget", options={"max": 1})])


def test_tool_budget_vetoes_calls_past_the_budget_each_turn(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Lookup"], plugins=[
        {"module": "tool_budget", "options": {"max_calls": 2}}])
    three = "\n".join(call("lookup", label=x) for x in ("a", "b", "c"))
    model = ScriptedModel([three, "Enough.", call("lookup", label="d"), "Again."])
    ctl = Controller(parts, model)
    first = run(ctl, "go")
    assert [c.ok for c in first.calls] == [True, True, False]
    assert "budget of 2 per turn is used up" in first.calls[2].result
    second = run(ctl, "again")  # a new turn, a new budget
    assert second.calls[0].ok


def test_redactor_masks_patterns_and_env_values(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_API_KEY", "hunter2-secret")
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Echo"], plugins=[
        {"module": "redactor", "options": {"patterns": [r"sk-[A-Za-z0-9]{8,}"],
                                           "env": ["TEST_API_KEY", "TEST_UNSET_VAR"]}}])
    model = ScriptedModel([call("echo", label="key sk-ABCDEFGH12 and hunter2-secret"),
                           "Done."])
    result = run(Controller(parts, model), "go")
    assert result.calls[0].result == "echo: key [redacted] and [redacted]"
    assert last_user(model.requests[1]).endswith("echo: key [redacted] and [redacted]")
    assert Redactor({"mask": "***"}).redact("x") == "x"
