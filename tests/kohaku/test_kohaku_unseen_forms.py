"""KohakuTerrarium forms its configuration reference documents and the earlier corpus did
not use: KT's own timer and startup triggers, terminal inputs, keys set to what terrarium
does anyway, plugin shorthands and budgets, bare `model:` preset names and variation
selectors, KT's generic tool settings, and its framework-hint names.

Every fixture here was written for these tests in KT's documented shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.config import load_single_creature
from terrarium.config.models import CreatureConfig
from terrarium.llm.presets import resolve_preset
from tests.config_fixtures import errors_of, write

PLAIN = " is not supported here; use "


@pytest.fixture(autouse=True)
def _no_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_LLM", raising=False)
    monkeypatch.delenv("TERRARIUM_PATH", raising=False)


def config_of(tmp_path: Path, body: str) -> CreatureConfig:
    write(tmp_path, {"c/config.yaml": "name: c\n" + body})
    return load_single_creature(tmp_path / "c").creatures["c"].config


def only_line(tmp_path: Path, body: str) -> str:
    write(tmp_path, {"c/config.yaml": "name: c\n" + body})
    errors = errors_of(tmp_path / "c")
    assert len(errors) == 1, errors
    return errors[0]


# -- what wakes a creature ----------------------------------------------------------------


@pytest.mark.parametrize("timer", [
    "  - type: timer\n    prompt: Check the service.\n"
    "    options: {interval: 60, immediate: true}\n",
    "  - type: timer\n    prompt: Check the service.\n    interval: 60\n    immediate: true\n",
])
def test_kt_timer_is_terrariums_timer_plus_a_startup_trigger_when_immediate(
        tmp_path: Path, timer: str) -> None:
    cfg = config_of(tmp_path, "triggers:\n" + timer)
    kinds = [(t.type, t.every, t.text) for t in cfg.triggers]
    assert kinds == [("timer", 60, "Check the service."), ("startup", None, "Check the service.")]


def test_kt_startup_trigger_is_a_startup_trigger(tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "startup_trigger:\n  prompt: Greet the user.\n")
    assert [(t.type, t.text) for t in cfg.triggers] == [("startup", "Greet the user.")]


@pytest.mark.parametrize(("kind", "needle"), [
    ("channel", "`channels.listen`"), ("context", "an `idle` trigger")])
def test_kt_trigger_kinds_terrarium_lacks_are_one_line_each_and_the_rest_load(
        tmp_path: Path, kind: str, needle: str) -> None:
    line = only_line(tmp_path, "triggers:\n  - {type: timer, interval: 30}\n"
                               f"  - type: {kind}\n    prompt: 'Look: {{content}}'\n")
    assert "config.yaml:4:5: triggers[1]: KohakuTerrarium's " in line
    assert f"{kind} trigger" in line and PLAIN in line and needle in line


@pytest.mark.parametrize("kind", ["cli", "cli_nonblocking", "tui", "none"])
def test_kt_terminal_inputs_are_read(tmp_path: Path, kind: str) -> None:
    config_of(tmp_path, f"input:\n  type: {kind}\n  prompt: 'User: '\n")


def test_a_kt_input_module_is_still_one_plain_line(tmp_path: Path) -> None:
    line = only_line(tmp_path, "input:\n  type: custom\n  module: ./custom/mic.py\n"
                               "  class: Mic\n")
    assert ":3:3: input.type: KohakuTerrarium's input modules" in line and PLAIN in line


# -- keys whose value is terrarium's own behaviour --------------------------------------


def test_kt_keys_set_to_what_terrarium_does_anyway_load(tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "include_tools_in_prompt: true\ninclude_hints_in_prompt: true\n"
                              "sanitize_orphan_tool_calls: true\ndisable_provider_tools: []\n"
                              "ephemeral: false\nmax_messages: 0\nmax_subagent_depth: 3\n"
                              "controller:\n  include_tools_in_prompt: true\n  ephemeral: false\n")
    assert cfg.subagent_depth == 3


def test_kt_keys_set_otherwise_are_still_refused(tmp_path: Path) -> None:
    line = only_line(tmp_path, "include_tools_in_prompt: false\n")
    assert "include_tools_in_prompt: KohakuTerrarium's" in line and PLAIN in line


def test_kt_framework_hint_names_are_terrariums(tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "framework_hint_overrides:\n"
                              "  framework.execution_model.dynamic: 'Ask info first.'\n"
                              "  framework.output_model: ''\n")
    assert cfg.framework_hint_overrides == {"execution_dynamic": "Ask info first.",
                                            "output_model": ""}


# -- plugins ----------------------------------------------------------------------------


def test_a_kt_plugin_named_by_a_bare_string_is_read(tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "plugins: [budget]\n")
    assert [p.module for p in cfg.plugins] == ["tool_budget"]


def test_kt_budgets_tool_call_budget_is_max_calls(tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "plugins:\n  - name: budget\n"
                              "    options: {tool_call_budget: [75, 100]}\n")
    assert [(p.module, p.options) for p in cfg.plugins] == [("tool_budget", {"max_calls": 100})]


def test_kt_budgets_turn_budget_is_one_plain_line(tmp_path: Path) -> None:
    line = only_line(tmp_path, "plugins:\n  - name: budget\n"
                               "    options: {turn_budget: [40, 60], tool_call_budget: 9}\n")
    assert "plugins[0].options.turn_budget: KohakuTerrarium's" in line
    assert PLAIN in line and "max_iterations" in line


# -- naming a model ---------------------------------------------------------------------


def test_a_bare_model_that_is_a_preset_asks_that_presets_server(tmp_path: Path) -> None:
    ctl = config_of(tmp_path, "controller:\n  model: gpt-5.4\n  temperature: 0.5\n").controller
    assert ctl is not None and ctl.provider == "openai"
    assert ctl.base_url == "https://api.openai.com/v1" and ctl.model == "gpt-5.4"
    assert ctl.temperature == 0.5


def test_a_bare_model_that_is_no_preset_is_an_error_not_the_embedded_model(
        tmp_path: Path) -> None:
    line = only_line(tmp_path, "controller:\n  model: my-local-thing\n")
    assert ":3:3: controller.model: controller.model 'my-local-thing' is not a model preset" \
        in line
    assert "base_url" in line


def test_a_model_beside_its_server_is_untouched(tmp_path: Path) -> None:
    ctl = config_of(tmp_path, "controller:\n  base_url: http://127.0.0.1:9/v1\n"
                              "  model: my-local-thing\n").controller
    assert ctl is not None and ctl.model == "my-local-thing"


@pytest.mark.parametrize(("name", "url", "model"), [
    ("gpt-5.4-or", "https://openrouter.ai/api/v1", "openai/gpt-5.4"),
    ("claude-opus-4.7-or", "https://openrouter.ai/api/v1", "anthropic/claude-opus-4.7"),
    ("gpt-5.4-api", "https://api.openai.com/v1", "gpt-5.4"),
    ("gpt-4o-mini-api", "https://api.openai.com/v1", "gpt-4o-mini"),
])
def test_kt_preset_suffixes_or_and_api(name: str, url: str, model: str) -> None:
    settings = resolve_preset(name)
    assert settings is not None
    assert (settings["base_url"], settings["model"]) == (url, model)


def test_a_kt_variation_selector_is_one_plain_line_not_part_of_the_model_id(
        tmp_path: Path) -> None:
    line = only_line(tmp_path, "controller:\n  llm: claude-opus-4.6@reasoning=high\n")
    assert ":3:3: controller.llm: KohakuTerrarium's model variation selector " \
        "'@reasoning=high'" in line
    assert PLAIN in line and "reasoning_effort: high" in line


# -- KT's settings of any tool entry ----------------------------------------------------


@pytest.mark.parametrize(("entry", "where", "needle"), [
    ("  - {name: bash, options: {working_dir: ./w}}\n", ":3:28: tools[0].options.working_dir",
     "`workspace`"),
    ("  - {name: bash, options: {env: {A: '1'}}}\n", ":3:28: tools[0].options.env",
     "pass_env"),
    ("  - name: web_fetch\n    notify_controller_on_background_complete: false\n",
     ":4:5: tools[0].notify_controller_on_background_complete", "`background`"),
])
def test_kt_tool_settings_terrarium_lacks_are_located_lines(
        tmp_path: Path, entry: str, where: str, needle: str) -> None:
    line = only_line(tmp_path, "tools:\n" + entry)
    assert where + ": KohakuTerrarium's" in line and PLAIN in line and needle in line


def test_kt_tool_options_are_read_and_their_mistakes_located_at_the_entry(
        tmp_path: Path) -> None:
    cfg = config_of(tmp_path, "tools:\n  - name: bash\n"
                              "    options: {timeout: 30, max_output: 2000}\n")
    assert cfg.tool_options["shell"] == {"timeout": 30, "max_output_bytes": 2000}
    line = only_line(tmp_path, "tools:\n  - think\n  - name: bash\n"
                               "    options: {timeout: 30, bogus: 1}\n")
    assert ":5:28: tools[1].options.bogus: unknown key 'bogus'" in line


# -- path and format forms --------------------------------------------------------------


@pytest.mark.parametrize(("body", "where"), [
    ("tool_format: {start: '<<', end: '>>'}\n", ":2:1: tool_format"),
    ("controller:\n  tool_format: {start: '<<'}\n", ":3:3: controller.tool_format"),
])
def test_a_kt_custom_tool_format_is_one_plain_line(tmp_path: Path, body: str,
                                                   where: str) -> None:
    line = only_line(tmp_path, body)
    assert f"{where}: KohakuTerrarium's custom tool-call formats" in line and PLAIN in line


def test_kt_project_relative_creature_path_is_found_up_to_the_package(tmp_path: Path) -> None:
    """KT resolves `creatures/NAME` by walking up from the file's folder to the project."""
    write(tmp_path, {
        "pkg/kohaku.yaml": "name: pkg\ncreatures: [creatures/helper]\n",
        "pkg/creatures/helper/config.yaml": "name: helper\ntools: [think]\n",
        "pkg/creatures/kid/config.yaml": "name: kid\nbase_config: creatures/helper\n",
        "creatures/outside/config.yaml": "name: outside\n",
        "pkg/creatures/lost/config.yaml": "name: lost\nbase_config: creatures/outside\n"})
    kid = load_single_creature(tmp_path / "pkg/creatures/kid").creatures["kid"].config
    assert kid.tools == ["think"]
    (line,) = errors_of(tmp_path / "pkg/creatures/lost")  # never past the package's folder
    assert "base_config 'creatures/outside' not found" in line
