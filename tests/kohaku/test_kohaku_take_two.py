"""KohakuTerrarium users, take two: one plain line per refusal, KT names that mean the same
thing, lazy packages, an honest ``migrate``, model presets and reasoning models.

Every KT form here was written for these tests (none is copied from KohakuTerrarium or
kt-biome); ``tests/kohaku_corpus/workbench`` is a KT 2.0-form package in the same spirit.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.cli.command import main
from terrarium.config import load_single_creature, load_team
from terrarium.controller.assembly import assemble
from terrarium.events import Event, OutputText, Reasoning, TranscriptAppended
from terrarium.llm.presets import resolve_preset
from terrarium.llm.reasoning import ThinkSplitter
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.tail import TailState
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime
from tests.config_fixtures import errors_of, write

CORPUS = Path(__file__).parents[1] / "kohaku_corpus"
PLAIN = " is not supported here; use "


@pytest.fixture(autouse=True)
def _no_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_LLM", raising=False)
    monkeypatch.delenv("TERRARIUM_PATH", raising=False)


def one_plain_line(path: Path, *needles: str) -> str:
    """The single error of loading ``path``: one line, KT's wording, naming ``needles``."""
    errors = errors_of(path)
    assert len(errors) == 1, errors
    head = errors[0].splitlines()[0]
    assert "KohakuTerrarium's " in head and PLAIN in head, head
    for n in needles:
        assert n in head, head
    return head


# -- each refusal: one plain line ---------------------------------------------------------


@pytest.mark.parametrize(("body", "needles"), [
    ("output:\n  named_outputs:\n    panel: {type: custom, module: x.y}\n",
     ("named_outputs.panel.type", "custom output modules")),
    ("plugins:\n  - name: sandbox\n", ("plugins[0]", "built-in plugin 'sandbox'", "`approve`")),
    ("plugins:\n  - {name: meter, type: package, module: pkg.meter, class: Meter}\n",
     ("plugins[0]", "plugin 'pkg.meter.Meter'")),
    ("tools:\n  - {name: show_card, type: builtin}\n", ("tools[0]", "'show_card'")),
    ("tools:\n  - {name: delete_trigger, type: builtin}\n", ("tools[0]", "'delete_trigger'")),
    ("tools:\n  - {name: group_send, type: builtin}\n",
     ("tools[0]", "'group_send' on a creature that is not the root")),
])
def test_each_kt_refusal_is_one_plain_line(tmp_path: Path, body: str,
                                           needles: tuple[str, ...]) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\n" + body})
    one_plain_line(tmp_path / "c", *needles)


def test_terrarium_interface_is_one_plain_line(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": "terrarium:\n  name: t\n  interface: web\n  creatures:\n"
                          "    - {name: a, config: a}\n",
        "a/config.yaml": "name: a\n"})
    one_plain_line(tmp_path, "terrarium.interface", "`terrarium run`")


def test_a_root_that_fails_to_load_is_one_error_not_one_per_channel(tmp_path: Path) -> None:
    """The root's base creature is missing: that is the error; the channels only the root
    would have heard do not each add 'nobody listens to it'."""
    write(tmp_path, {
        "terrarium.yaml": (
            "terrarium:\n  name: t\n"
            "  root:\n    base_config: ./missing\n    system_prompt_file: root.md\n"
            "  creatures:\n"
            "    - name: a\n      config: a\n      channels: {can_send: [done, notes]}\n"
            "  channels:\n    done: {type: queue}\n    notes: {type: queue}\n"),
        "root.md": "You operate the team.\n",
        "a/config.yaml": "name: a\n"})
    errors = errors_of(tmp_path)
    assert len(errors) == 1, errors
    assert "base_config" in errors[0] and "nobody listens" not in errors[0]


def test_a_base_creature_shared_by_three_entries_reports_its_mistake_once() -> None:
    errors = errors_of(CORPUS / "workbench")
    assert sum("controller.max_messages" in e for e in errors) == 1, errors


# -- KT names that mean the same ------------------------------------------------------------


def test_basic_kt_creature_works_in_dynamic_mode_and_prompt_says_info_was_added(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\ntools: [bash, read, write]\n"})
    team = load_single_creature(tmp_path / "c")
    parts = assemble(team, "c")
    assert parts.registry.names() == ["info", "read_file", "shell", "write_file"]
    assert parts.notes and "'info' tool was added" in parts.notes[0]
    assert main(["prompt", str(tmp_path / "c"), "c"]) == 0
    assert "note: skill_mode dynamic: the 'info' tool was added" in capsys.readouterr().out


def test_static_mode_or_a_listed_info_adds_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"s/config.yaml": "name: s\nskill_mode: static\ntools: [bash]\n",
                     "d/config.yaml": "name: d\ntools: [bash, info]\n"})
    for name in ("s", "d"):
        parts = assemble(load_single_creature(tmp_path / name), name)
        assert parts.notes == ()
    assert "info" not in assemble(load_single_creature(tmp_path / "s"), "s").registry.names()


def test_kt_plugins_map_onto_terrariums(tmp_path: Path) -> None:
    write(tmp_path, {"c/config.yaml": (
        "name: c\ntools: [bash]\nplugins:\n  - {name: budget, options: {max_tool_calls: 3}}\n"
        "  - {name: auto-compact}\n")})
    cfg = load_single_creature(tmp_path / "c").creatures["c"].config
    assert [(p.module, p.options) for p in cfg.plugins] == [("tool_budget", {"max_calls": 3})]
    assert cfg.compaction == "summarize"


def test_send_channel_in_tools_is_one_call_for_every_channel(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": ("terrarium:\n  name: t\n  creatures:\n"
                           "    - {name: a, config: a, channels: {can_send: [x, y]}}\n"
                           "    - {name: b, config: b, channels: {listen: [x, y]}}\n"
                           "  channels: {x: {type: queue}, y: {type: queue}}\n"),
        "a/config.yaml": "name: a\ntools:\n  - {name: send_channel, type: builtin}\n",
        "b/config.yaml": "name: b\n"})
    team = load_team(tmp_path)
    assert team.creatures["a"].config.channel_call is True
    parts = assemble(team, "a")
    spec = parts.specs["send_channel"]
    assert set(spec.args_model.model_json_schema()["properties"]) == {"channel", "message"}
    assert {"send_x", "send_y", "send_channel"} <= set(parts.specs)


# -- lazy packages --------------------------------------------------------------------------


def test_a_broken_package_on_the_path_breaks_only_configs_that_use_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {
        "installed/kohaku.yaml": ("name: oldpkg\nio:\n  - {name: x, module: a.b, class: C}\n"
                                  "creatures: [creatures/base]\n"),
        "installed/creatures/base/config.yaml": "name: base\nsession_key: abc\n",
        "mine/config.yaml": "name: mine\ntools: [read_file]\n",
        "user/config.yaml": "name: user\nbase_config: \"@oldpkg/creatures/base\"\n"})
    monkeypatch.setenv("TERRARIUM_PATH", str(tmp_path / "installed"))
    assert errors_of(tmp_path / "mine") == []
    errors = errors_of(tmp_path / "user")
    assert any("io: KohakuTerrarium's" in e for e in errors)
    assert any("session_key: KohakuTerrarium's" in e for e in errors)


# -- migrate: honest pass and fail ---------------------------------------------------------


def test_migrate_says_passes_only_when_validate_passes(tmp_path: Path) -> None:
    """A prompt that cannot fit the default 4K window: load-time checks pass, the full
    check does not; migrate must say so (exit 2), and the same config passes once the
    default model is a preset with room."""
    write(tmp_path / "src", {
        "config.yaml": "name: big\nsystem_prompt_file: prompts/system.md\ntools: [read]\n",
        "prompts/system.md": "You are thorough. " * 2500 + "\n"})
    assert main(["migrate", str(tmp_path / "src"), str(tmp_path / "o")]) == 2
    report = (tmp_path / "o/MIGRATION.md").read_text()
    assert "does not pass" in report and "validate` passes" not in report
    assert "4096-token context window" in report
    assert main(["validate", str(tmp_path / "o")]) == 2


def test_migrate_passes_with_a_default_model_that_fits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "src", {
        "config.yaml": "name: big\nsystem_prompt_file: prompts/system.md\ntools: [read]\n",
        "prompts/system.md": "You are thorough. " * 2500 + "\n"})
    monkeypatch.setenv("TERRARIUM_LLM", "claude-sonnet-4.5")
    assert main(["migrate", str(tmp_path / "src"), str(tmp_path / "o")]) == 0
    assert "TERRARIUM_LLM=claude-sonnet-4.5" in (tmp_path / "o/MIGRATION.md").read_text()


def test_migrate_workbench_keeps_comments_rewrites_includes_and_lists_behaviour(
        tmp_path: Path) -> None:
    out = tmp_path / "wb"
    assert main(["migrate", str(CORPUS / "workbench"), str(out)]) == 0
    coder = (out / "creatures/coder/config.yaml").read_text()
    assert "# KohakuTerrarium's own tool names" in coder  # comments survive the rewrite
    assert "history_turns: 20" in coder and "max_messages" not in coder
    assert "controller:" not in coder  # never a key where it is invalid (history_turns)
    team_file = (out / "terrariums/pair_shop/terrarium.yaml").read_text()
    assert team_file.startswith("# Pair shop: the maker writes")
    assert "team_chat: {description: \"Everyone talks here\", type: broadcast}" in team_file
    assert "tasks: {description: \"Work for the maker\", type: queue}" in team_file
    assert "workspace: shared" in team_file
    assert '{% include "house-rules.md" %}' in (out / "creatures/coder/prompts/system.md"
                                                 ).read_text()
    report = (out / "MIGRATION.md").read_text()
    assert "## Behaviour that differs from KohakuTerrarium" in report
    for said in ("share one workspace", "team_status, team_send", "TERRARIUM_LLM",
                 "written `type: broadcast`"):
        assert said in report
    assert main(["validate", str(out)]) == 0


def _run(team_path: Path, tmp_path: Path, *texts: str) -> tuple[TeamRuntime, list[Event]]:
    team = load_team(team_path)
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", on_event=events.append)

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                for text in texts:
                    await rt.send_user(text)
                    await rt.wait_idle()
        return rt

    return anyio.run(go), events


PAIR_SHOP_SCRIPT = """\
# each creature reads its own copy; a step is chosen by what the creature was just told
default_reply: "Noted."
steps:
  - match: "Please build"
    tool_calls: [{name: team_send, arguments: {channel: tasks,
                  payload: "{\\"text\\": \\"TASK: write greet.py\\"}"}}]
  - match: "Sent on tasks"
    reply: "Handed to the maker."
  - match: "TASK:"
    reply: "READY: greet.py is written."
    tool_calls:
      - {name: write_file, arguments: {path: greet.py, content: "print('hi')\\n"}}
      - {name: send_channel, arguments: {channel: team_chat, message: "CHAT: maker at work"}}
  - match: "READY:"
    tool_calls: [{name: read_file, arguments: {path: greet.py}}]
  - match: "print('hi')"
    tool_calls: [{name: send_channel, arguments: {channel: verdicts,
                  message: "VERDICT: greet.py approved"}}]
  - match: "VERDICT:"
    reply: "The pair shop approved greet.py."
"""


def test_migrated_kt_team_runs_end_to_end_without_edits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migrate, then run the team unchanged on the scripted model (chosen as the default
    model, as KohakuTerrarium users choose theirs): the checker reads the maker's file in the
    shared workspace, send_channel delivers, team_chat is heard by every other listener."""
    out = tmp_path / "wb"
    assert main(["migrate", str(CORPUS / "workbench"), str(out)]) == 0
    script = tmp_path / "script.yaml"
    script.write_text(PAIR_SHOP_SCRIPT)
    monkeypatch.setenv("TERRARIUM_LLM", f"scripted:{script}")
    rt, _ = _run(out / "terrariums/pair_shop", tmp_path, "Please build greet.py")
    calls = {name: [(c.name, c.ok, c.result) for c in r.calls] for name, r in rt.results}
    assert ("write_file", True, "Wrote 12 bytes to greet.py.") in calls["maker"]
    assert ("read_file", True, "print('hi')\n") in calls["checker"]
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        msgs = [(e.channel, e.sender, e.payload, to) for e, to in log.messages(rt.run_id)]
    assert ("verdicts", "checker", {"text": "VERDICT: greet.py approved"}, ("root",)) in msgs
    chat = [to for ch, sender, _, to in msgs if ch == "team_chat"]
    assert chat == [("checker",)]  # a broadcast: every listener but the sender
    assert dict(rt.results)["root"].text == "The pair shop approved greet.py."


# -- presets --------------------------------------------------------------------------------


def test_presets_name_endpoint_key_and_window() -> None:
    ds = resolve_preset("deepseek-chat")
    assert ds == {"provider": "openai", "base_url": "https://api.deepseek.com/v1",
                  "model": "deepseek-chat", "context_window": 128_000,
                  "api_key_env": "DEEPSEEK_API_KEY"}
    local = resolve_preset("ollama:qwen3:8b")
    assert local is not None and local["model"] == "qwen3:8b" and "api_key_env" not in local
    assert resolve_preset("llamacpp:any")["llama_cpp"] is True  # type: ignore[index]
    # KohakuTerrarium's names: the same model on the vendor's OpenAI-compatible endpoint
    claude = resolve_preset("claude-opus-4.6")
    assert claude is not None and claude["model"] == "claude-opus-4-6"
    assert claude["base_url"] == "https://api.anthropic.com/v1"
    routed = resolve_preset("or-gpt-5.4")
    assert routed is not None and routed["model"] == "openai/gpt-5.4"
    assert routed["base_url"].startswith("https://openrouter.ai")
    assert resolve_preset("no-such-model") is None


@pytest.mark.parametrize("form", ["llm: gemini-2.5-flash\n",
                                  "controller:\n  preset: gemini-2.5-flash\n",
                                  "controller:\n  llm: gemini-2.5-flash\n  temperature: 0.5\n"])
def test_a_preset_is_named_three_ways(tmp_path: Path, form: str) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\n" + form})
    ctl = load_single_creature(tmp_path / "c").creatures["c"].config.controller
    assert ctl is not None and ctl.provider == "openai" and ctl.model == "gemini-2.5-flash"
    assert ctl.api_key_env == "GEMINI_API_KEY" and ctl.context_window == 1_048_576


def test_an_unknown_preset_is_located_with_the_names(tmp_path: Path) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\nllm: deepsek-chat\n"})
    (line,) = errors_of(tmp_path / "c")
    assert "unknown model profile or preset 'deepsek-chat'" in line
    assert "did you mean 'deepseek-chat'" in line


def test_a_prompt_too_big_for_the_presets_window_is_a_validate_error_with_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"c/config.yaml": ("name: c\nsystem_prompt_file: p.md\n"
                                       "controller: {preset: ollama-llama3.2}\n"),
                     "c/p.md": "Answer with care. " * 3000 + "\n"})
    assert errors_of(tmp_path / "c") == []  # loading is fine ...
    assert main(["validate", str(tmp_path / "c")]) == 2  # ... the full check is not
    err = capsys.readouterr().err
    assert "needs" in err and "tokens" in err and "8192-token context window" in err


# -- reasoning models -------------------------------------------------------------------------


def test_think_splitter_handles_tags_cut_across_deltas() -> None:
    t = ThinkSplitter()
    parts = [t.feed(c) for c in ["<th", "ink>plan it", "</thi", "nk>\n\nHel", "lo <", "b>!"]]
    parts.append(t.close())
    assert "".join(p[0] for p in parts) == "Hello <b>!"
    assert "".join(p[1] for p in parts) == "plan it"


REASONING_TEAM = {
    "terrarium.yaml": (
        "terrarium:\n  name: t\n  input_channel: inbox\n  creatures:\n"
        "    - {name: thinker, config: thinker, channels: {listen: [inbox], can_send: [out]}}\n"
        "    - {name: reader, config: reader, channels: {listen: [out]}}\n"
        "  channels: {inbox: {type: queue}, out: {type: queue}}\n"),
    "thinker/config.yaml": (
        "name: thinker\nskill_mode: static\ncontroller: {provider: scripted, script: s.yaml}\n"
        "output:\n  default: speech\n  named_outputs:\n    speech: {type: tts}\n"),
    "thinker/s.yaml": (  # thinking apart (reasoning_content), then a <think> block
        "steps:\n"
        "  - reasoning: \"SECRET-A: the user wants a greeting.\"\n"
        "    reply: |\n"
        "      <think>SECRET-B: keep it short.</think>\n\n"
        "      [/send_out]\n"
        "      @@text=Hello reader\n"
        "      [send_out/]\n"
        "      Hi there.\n"
        "  - reply: \"Again.\"\n"),
    "reader/config.yaml": "name: reader\ncontroller: {provider: scripted, script: s.yaml}\n",
    "reader/s.yaml": "default_reply: \"ok\"\n",
}


@pytest.mark.parametrize("keep", [False, True])
def test_reasoning_never_reaches_a_channel_an_output_or_the_voice(
        tmp_path: Path, keep: bool) -> None:
    files = dict(REASONING_TEAM)
    if keep:
        files["thinker/config.yaml"] = files["thinker/config.yaml"].replace(
            "script: s.yaml}", "script: s.yaml, keep_reasoning: true}")
    write(tmp_path / "team", files)
    rt, events = _run(tmp_path / "team", tmp_path, "greet the reader", "once more")
    spoken = "".join(e.text for e in events if isinstance(e, OutputText))
    assert "Hi there." in spoken and "SECRET" not in spoken
    thought = "".join(e.text for e in events if isinstance(e, Reasoning))
    assert "SECRET-A" in thought and "SECRET-B" in thought
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        payloads = [e.payload for e, _ in log.messages(rt.run_id)]
        logged = [ev for ev in log.events(rt.run_id) if ev["kind"] == "transcript"]
    assert {"text": "Hello reader"} in payloads and "SECRET" not in repr(payloads)
    assert any(ev["entry"]["kind"] == "reasoning" and "SECRET-B" in ev["entry"]["text"]
               for ev in logged)  # the log keeps the thinking, once per round
    assert [r.text.strip() for n, r in rt.results if n == "thinker"] == ["Hi there.", "Again."]
    history = [e.entry.text for e in events if isinstance(e, TranscriptAppended)
               and e.creature == "reader"]
    assert not any("SECRET" in h for h in history)
    thinker = rt.prompt("thinker")  # the second turn's: the first is in its history
    assert thinker is not None
    said = "".join(m.get("content") or "" for m in thinker.messages()
                   if m.get("role") == "assistant")
    assert "Hi there." in said
    assert ("SECRET-B" in said) is keep  # out of the history unless configured


def test_openai_reasoning_content_is_a_reasoning_delta() -> None:
    from terrarium.llm.openai_client import OpenAIClient, _StreamState

    client = OpenAIClient(base_url="http://127.0.0.1:9/v1", model="m")
    deltas = client._chunk_deltas(
        {"choices": [{"delta": {"reasoning_content": "hmm"}}]}, _StreamState(), 0.0,
        delta_key="delta")
    assert [(d.text, d.reasoning) for d in deltas] == [("", "hmm")]
    deltas = client._chunk_deltas(
        {"choices": [{"delta": {"content": "Hi", "reasoning": "so"}}]}, _StreamState(), 0.0,
        delta_key="delta")
    assert [(d.text, d.reasoning) for d in deltas] == [("Hi", "so")]


def test_workbench_is_a_kt_form_package_that_loads_only_with_plain_lines() -> None:
    lines = errors_of(CORPUS / "workbench")
    assert lines  # unmigrated, it is refused ...
    for line in lines:  # ... each time in one plain line
        assert "KohakuTerrarium's " in line and PLAIN in line, line


def test_an_unmigrated_kt_team_keeps_kt_channel_kinds(tmp_path: Path) -> None:
    """KT-form entries (`base_config` with overrides), channels without `type`: the team
    chat everyone talks on is a broadcast, a hand-off channel a queue, as in KT."""
    write(tmp_path, {
        "terrarium.yaml": (
            "terrarium:\n  name: t\n  creatures:\n"
            "    - {name: a, base_config: ./c,\n"
            "       channels: {listen: [chat], can_send: [chat, work]}}\n"
            "    - {name: b, base_config: ./c,\n"
            "       channels: {listen: [chat, work], can_send: [chat]}}\n"
            "  channels:\n    chat: {description: everyone}\n    work: {description: jobs}\n"),
        "c/config.yaml": "name: c\n"})
    team = load_team(tmp_path)
    assert (team.channels["chat"].type, team.channels["work"].type) == ("broadcast", "queue")


def test_an_include_in_a_parents_persona_is_found_where_that_file_lives(tmp_path: Path) -> None:
    """Personas join along base_config; a fragment the parent's file includes from its own
    folder is found even when the child lives elsewhere (a terrarium beside a package)."""
    write(tmp_path, {
        "base/config.yaml": "name: base\nsystem_prompt_file: prompts/system.md\n",
        "base/prompts/system.md": '{% include "rules.md" %}\n',
        "base/prompts/rules.md": "RULES: be brief.\n",
        "child/config.yaml": ("name: child\nbase_config: ../base\n"
                              "system_prompt_file: prompts/child.md\n"),
        "child/prompts/child.md": "You are the child.\n"})
    parts = assemble(load_single_creature(tmp_path / "child"), "child")
    messages = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0)).messages()
    system = str(messages[0]["content"])
    assert "RULES: be brief." in system and "You are the child." in system


def test_a_kt_form_root_has_the_team_tools_under_kt_names_too(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": ("terrarium:\n  name: t\n  root: {base_config: ./c}\n"
                           "  creatures:\n    - {name: a, config: c}\n"),
        "c/config.yaml": "name: c\n"})
    names = assemble(load_team(tmp_path), "root").registry.names()
    assert {"team_status", "group_status", "group_start_node", "group_stop_node"} <= set(names)
    assert "group_status" not in assemble(load_team(tmp_path), "a").registry.names()


@pytest.mark.parametrize("case", sorted(p.name for p in CORPUS.iterdir() if p.is_dir()))
@pytest.mark.parametrize("default", [None, "ollama:tiny"])
def test_migrate_exit_code_is_validates_exit_code(
        case: str, default: str | None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Never a false pass (nor a false fail): whatever migrate says, validate agrees."""
    if default:
        monkeypatch.setenv("TERRARIUM_LLM", default)  # a different window: other outcomes
    out = tmp_path / case
    said = main(["migrate", str(CORPUS / case), str(out)])
    assert said == main(["validate", str(out)])
    assert ("`terrarium validate` passes" in (out / "MIGRATION.md").read_text()) is (said == 0)


def test_a_lazy_package_is_read_before_a_child_names_its_tools(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child names the package's tool by its bare name (KT's `type: package`); the
    package, referenced by `base_config` only, is read first so the name resolves."""
    write(tmp_path, {
        "pkg/kohaku.yaml": ("name: toolbox\ncreatures: [creatures/base]\ntools:\n"
                            "  - {name: ponder, module: terrarium.tools.think,\n"
                            "     class: ThinkTool}\n"),
        "pkg/creatures/base/config.yaml": "name: base\n",
        "me/config.yaml": ("name: me\nbase_config: \"@toolbox/creatures/base\"\n"
                           "tools:\n  - {name: ponder, type: package}\n")})
    monkeypatch.setenv("TERRARIUM_PATH", str(tmp_path / "pkg"))
    assert errors_of(tmp_path / "me") == []
    cfg = load_single_creature(tmp_path / "me").creatures["me"].config
    assert cfg.tools == ["terrarium.tools.think:ThinkTool"]


def test_a_model_profile_of_a_lazy_package_is_still_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {
        "models/kohaku.yaml": ("name: models\nllm_profiles:\n"
                               "  house: {base_url: 'http://127.0.0.1:9/v1', model: m}\n"),
        "me/config.yaml": "name: me\ncontroller: {llm: house}\n"})
    monkeypatch.setenv("TERRARIUM_PATH", str(tmp_path / "models"))
    ctl = load_single_creature(tmp_path / "me").creatures["me"].config.controller
    assert ctl is not None and ctl.model == "m" and ctl.provider == "openai"


def test_every_skill_includes_a_lazy_packages_skills(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {
        "kit/kohaku.yaml": ("name: kit\nio: [{name: x}]\n"  # broken elsewhere: not read
                            "skills:\n  - {name: tidy, path: skills/tidy}\n"),
        "kit/skills/tidy/SKILL.md": "---\nname: tidy\nsummary: keep it tidy\n---\nTidy up.\n",
        "me/config.yaml": "name: me\nskill_mode: static\nskills: ['*']\n"})
    monkeypatch.setenv("TERRARIUM_PATH", str(tmp_path / "kit"))
    assert errors_of(tmp_path / "me") == []
    skills = load_single_creature(tmp_path / "me").creatures["me"].config.skills
    assert [Path(s).parent.name for s in skills] == ["tidy"]
