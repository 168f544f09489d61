"""send_fill: message fields the runtime fills in, so the model writes only what needs judgment.

A router → speaker team on the scripted model: the router's model writes only
``recent_conversation``; the runtime adds the user's words verbatim (``input``) and the memory
matches (``recalled``). The prompt, the parser and the grammar never ask for filled fields,
and a send_fill that does not fit the team's wiring fails validation with file, line and key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.errors import ConfigErrors
from terrarium.formats import CallEvent, grammar_for, openai_tools
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.tail import TailState
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

FACT = "My sister Alma lives in Reykjavik"
QUESTION = "Where does Alma live?"
SUMMARY = "The user asks where their sister lives."
SEND = f"[/send_to_speaker]\n@@recent_conversation={SUMMARY}\n[send_to_speaker/]"

TEAM = """\
terrarium:
  name: fill
  input_channel: inbox
  creatures:
    - name: router
      config: router
      channels: {listen: [inbox], can_send: [to_speaker]}
    - name: speaker
      config: speaker
      channels: {listen: [to_speaker]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
    to_speaker:
      type: queue
      schema:
        fields:
          user_said: {type: str, description: "The user's latest words, verbatim."}
          recent_conversation: {type: str, default: "", description: "A short summary."}
          memory_context: {type: str, default: "", description: "Facts that matter."}
          turns: {type: int, default: 0}
"""

ROUTER: dict[str, Any] = {
    "name": "router",
    "controller": {"provider": "scripted", "script": "script.yaml"},
    "skill_mode": "static",
    "history_turns": 0,
    "memory_record": True,
    "memory_recall": 2,
    "send_fill": {"to_speaker": {"user_said": "input", "memory_context": "recalled"}},
}


def write_team(tmp_path: Path, **router: Any) -> Path:
    """The team folder, with ``router`` overriding keys of the router's config (None drops)."""
    (tmp_path / "terrarium.yaml").write_text(TEAM, encoding="utf-8")
    body = {k: v for k, v in {**ROUTER, **router}.items() if v is not None}
    for name, cfg in (("router", body), ("speaker", {**ROUTER, "name": "speaker",
                                                     "send_fill": {}, "memory_record": False,
                                                     "memory_recall": 0})):
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), "utf-8")
        (folder / "script.yaml").write_text("steps: []\n", encoding="utf-8")
    return tmp_path


def request_text(req: ChatRequest) -> str:
    return "\n".join(m.content or "" for m in req.messages)


def run_team(folder: Path, utterances: list[str]) -> tuple[TeamRuntime, ScriptedModel,
                                                            ScriptedModel]:
    router = ScriptedModel([], default_reply=SEND)
    speaker = ScriptedModel([], default_reply="Alma lives in Reykjavik.")
    opts = RuntimeOptions(runs_dir=folder / "runs", audio="none",
                          models={"router": router, "speaker": speaker})

    async def go() -> TeamRuntime:
        async with TeamRuntime(load_team(folder), opts) as rt:
            with anyio.fail_after(30):
                for text in utterances:
                    await rt.send_user(text)
                    await rt.wait_idle()
        return rt

    return anyio.run(go), router, speaker


def sent_payloads(rt: TeamRuntime) -> list[dict[str, Any]]:
    return [c.args for name, r in rt.results if name == "router" for c in r.calls
            if c.name == "send_to_speaker"]


def test_sent_message_carries_the_input_and_recalled_facts(tmp_path: Path) -> None:
    rt, _, speaker = run_team(write_team(tmp_path), [FACT, QUESTION])
    first, second = sent_payloads(rt)
    assert first == {"user_said": FACT, "recent_conversation": SUMMARY, "memory_context": "",
                     "turns": 0}
    # the model wrote only the summary; the runtime added the verbatim words and the match,
    # in the schema's order (receivers show fields in that order)
    assert list(second) == ["user_said", "recent_conversation", "memory_context", "turns"]
    assert second == {"user_said": QUESTION, "recent_conversation": SUMMARY,
                      "memory_context": FACT, "turns": 0}
    heard = request_text(speaker.requests[-1])
    assert QUESTION in heard and FACT in heard and SUMMARY in heard
    # the transcript shows the full payload that was sent
    calls = [e for e in rt.transcript("router") if e.kind == "tool_call"]
    assert calls[-1].data["args"] == second


def test_recent_source_fills_the_newest_records_oldest_first(tmp_path: Path) -> None:
    folder = write_team(tmp_path, memory_recall=None, memory_recent=2,
                        send_fill={"to_speaker": {"user_said": "input",
                                                  "memory_context": "recent"}})
    rt, _, _ = run_team(folder, ["one apple", "two pears", "three plums"])
    assert [p["memory_context"] for p in sent_payloads(rt)] == [
        "", "one apple", "one apple two pears"]


def test_prompt_and_grammar_never_ask_for_filled_fields(tmp_path: Path) -> None:
    parts = assemble(load_team(write_team(tmp_path)), "router")
    prefix = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0)).prefix
    channel = prefix.split("### `to_speaker`", 1)[1]
    assert ("- user_said (str): The user's latest words, verbatim. — filled in by the runtime "
            "from the input") in channel
    assert "- memory_context (str): Facts that matter. — filled in by the runtime from the "\
        "recalled facts" in channel
    assert "- recent_conversation (str, optional, default '')" in channel
    assert "@@user_said" not in prefix and "@@memory_context" not in prefix
    # the filled fields were the only required ones: the example shows what is left to write
    assert "Send with:\n[/send_to_speaker]\n@@recent_conversation=...\n" in channel
    grammar = grammar_for(parts.fmt, allow_text=False)
    assert "recent_conversation" in grammar
    assert "user_said" not in grammar and "memory_context" not in grammar
    # the parser refuses a filled field the model writes anyway
    wrote = SEND.replace("[send_to_speaker/]", "@@user_said=hi\n[send_to_speaker/]")
    (ev,) = [e for e in parts.fmt.parse(wrote) if isinstance(e, CallEvent)]
    assert ev.args is None and ev.error and "user_said" in ev.error
    (ok,) = [e for e in parts.fmt.parse(SEND) if isinstance(e, CallEvent)]
    assert ok.args is not None and ok.error is None


def test_listener_sees_the_plain_schema(tmp_path: Path) -> None:
    """Filling is the sender's business: the speaker's prompt shows the fields as they are."""
    parts = assemble(load_team(write_team(tmp_path)), "speaker")
    prefix = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0)).prefix
    assert "- user_said (str, required): The user's latest words, verbatim." in prefix
    assert "filled in by the runtime" not in prefix


@pytest.mark.parametrize("fmt", ["xml", "native"])
def test_other_formats_leave_filled_fields_out(tmp_path: Path, fmt: str) -> None:
    parts = assemble(load_team(write_team(tmp_path, tool_format=fmt)), "router")
    prefix = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0)).prefix
    if fmt == "native":
        (tool,) = openai_tools(parts.fmt.specs)
        assert set(tool["function"]["parameters"]["properties"]) == {
            "recent_conversation", "turns"}
        assert "its arguments are the schema fields not filled in by the runtime" in prefix
    else:
        assert "<user_said>" not in prefix and "user_said=" not in prefix


def test_memory_in_prompt_false_keeps_facts_out_but_still_fills(tmp_path: Path) -> None:
    rt, router, _ = run_team(write_team(tmp_path, memory_in_prompt=False), [FACT, QUESTION])
    asked = request_text(router.requests[-1])
    assert QUESTION in asked
    assert FACT not in asked and "## Recalled" not in asked
    assert sent_payloads(rt)[-1]["memory_context"] == FACT


def test_memory_in_prompt_default_shows_the_recalled_facts(tmp_path: Path) -> None:
    _, router, _ = run_team(write_team(tmp_path), [FACT, QUESTION])
    assert "## Recalled" in request_text(router.requests[-1])
    assert FACT in request_text(router.requests[-1])


def errors_of(folder: Path) -> list[str]:
    with pytest.raises(ConfigErrors) as info:
        load_team(folder)
    return [e.render() for e in info.value.errors]


def config_line(folder: Path, text: str) -> int:
    lines = (folder / "router" / "config.yaml").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if ln.strip().startswith(text))


@pytest.mark.parametrize(("fill", "key", "message", "hint"), [
    ({"to_speakr": {"user_said": "input"}}, "send_fill.to_speakr",
     "send_fill names channel 'to_speakr', which is not a declared channel",
     "did you mean 'to_speaker'?"),
    ({"inbox": {"text": "input"}}, "send_fill.inbox",
     "send_fill names channel 'inbox', which creature 'router' cannot send on",
     "'router' can send on: to_speaker"),
    ({"to_speaker": {"user_sad": "input"}}, "send_fill.to_speaker.user_sad",
     "channel 'to_speaker' has no field 'user_sad'", "did you mean 'user_said'?"),
    ({"to_speaker": {"user_said": "inptu"}}, "send_fill.to_speaker.user_said",
     "input should be 'input', 'recalled', 'recent', 'facts' or 'notes'", "did you mean 'input'?"),
    ({"to_speaker": {"turns": "input"}}, "send_fill.to_speaker.turns",
     "field 'turns' of channel 'to_speaker' does not hold text", "fill only str fields"),
    ({"to_speaker": {"memory_context": "recent"}}, "send_fill.to_speaker.memory_context",
     "send_fill source 'recent' needs memory_recent > 0", "set `memory_recent: N`"),
])
def test_validation_names_file_line_and_key(
    tmp_path: Path, fill: dict[str, Any], key: str, message: str, hint: str
) -> None:
    folder = write_team(tmp_path, send_fill=fill)
    (err,) = errors_of(folder)
    field = key.rsplit(".", 1)[1]
    where = f"{folder / 'router' / 'config.yaml'}:{config_line(folder, field + ':')}:"
    assert err.startswith(where), err
    assert key in err and message in err and hint in err


def test_inherited_send_fill_is_reported_in_the_base_file(tmp_path: Path) -> None:
    folder = write_team(tmp_path, send_fill=None)
    base = {"send_fill": {"to_speaker": {"user_sad": "input"}}}
    (folder / "base.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
    cfg = yaml.safe_load((folder / "router" / "config.yaml").read_text())
    cfg["base_config"] = "../base.yaml"
    (folder / "router" / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    (err,) = errors_of(folder)
    assert err.startswith(f"{folder / 'base.yaml'}:3:"), err
    assert "send_fill.to_speaker.user_sad" in err


def test_a_filled_required_field_is_fine(tmp_path: Path) -> None:
    """user_said is required by the schema: the model may leave it out, the runtime adds it."""
    team = load_team(write_team(tmp_path))
    assert team.creatures["router"].config.send_fill["to_speaker"]["user_said"] == "input"


def test_native_history_shows_only_what_the_model_wrote(tmp_path: Path) -> None:
    """The history repeats the model's own call, so it never learns to write filled fields."""
    parts = assemble(load_team(write_team(tmp_path, tool_format="native", history_turns=None)),
                     "router")
    model = ScriptedModel([{"tool_calls": [{"name": "send_to_speaker",
                                            "arguments": {"recent_conversation": SUMMARY}}]},
                           "Done."])
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    ctl = Controller(parts, model, send=send)

    async def go() -> None:
        with anyio.fail_after(20):
            await ctl.run_turn([Incoming(text=QUESTION)])
            await ctl.run_turn([Incoming(text="thanks")])

    anyio.run(go)
    assert sent[0]["user_said"] == QUESTION and sent[0]["recent_conversation"] == SUMMARY
    history = [m.content or "" for m in model.requests[1].messages if m.role == "assistant"]
    assert any(SUMMARY in h for h in history)
    assert not any("user_said" in h or QUESTION in h for h in history)


def test_notes_carry_what_the_user_told_however_it_is_asked(tmp_path: Path) -> None:
    # issue 30: no word of "What colour is my car?" is in "I drive a blue Volvo.", and no
    # fact rule reads it; the user's latest statement is still the note
    fill = {"to_speaker": {"user_said": "input", "memory_context": "notes"}}
    folder = write_team(tmp_path, memory_notes=2, memory_recall=0, send_fill=fill)
    rt, _, _ = run_team(folder, ["I drive a blue Volvo.", "What colour is my car?"])
    assert sent_payloads(rt)[-1]["memory_context"] == "I drive a blue Volvo."


def test_notes_need_memory_record(tmp_path: Path) -> None:
    fill = {"to_speaker": {"user_said": "input", "memory_context": "notes"}}
    folder = write_team(tmp_path, memory_notes=2, memory_record=False, send_fill=fill)
    assert any("memory_notes recalls what the creature recorded" in e
               and "memory_record: true" in e for e in errors_of(folder))
