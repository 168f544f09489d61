"""Message templates: how a channel's messages reach a listener's model."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.incoming import Incoming, compile_message_template, render_payload
from terrarium.controller.loop import Controller
from terrarium.errors import TemplateError
from terrarium.llm.scripted import ScriptedModel
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.tail import TailState

TEAM = """\
terrarium:
  name: templated
  input_channel: inbox
  creatures:
    - name: a
      config: a
      channels: {listen: [inbox], can_send: [asks]}
    - name: b
      config: b
      channels: {listen: [asks]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
    asks:
      type: queue
      schema:
        fields:
          fact: {type: str, default: ""}
          kind: {type: enum, values: [question, other]}
          words: str
"""

TEMPLATE = """{% if fact %}Earlier I told you: {{ fact }}
{% endif %}{% if kind == "question" %}My question: {% endif %}{{ words }}"""


def team_dir(tmp_path: Path, template: str | None) -> Path:
    (tmp_path / "terrarium.yaml").write_text(TEAM)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        body = "".join(f"    {line}\n" for line in (template or "").splitlines())
        extra = f"message_templates:\n  asks: |-\n{body}" if name == "b" and template else ""
        (tmp_path / name / "config.yaml").write_text(f"name: {name}\n{extra}")
    return tmp_path


def seen_by_b(tmp_path: Path, template: str | None, payload: dict[str, str]) -> str:
    parts = assemble(load_team(team_dir(tmp_path, template)), "b")
    model = ScriptedModel(["All right."])
    ctl = Controller(parts, model)

    async def go() -> None:
        with anyio.fail_after(10):
            await ctl.run_turn([Incoming(text="", channel="asks", sender="a", payload=payload)])

    anyio.run(go)
    content = model.requests[0].messages[-1].content
    assert content is not None
    return content


def test_template_renders_the_message_the_model_reads(tmp_path: Path) -> None:
    payload = {"fact": "My cat is Tom.", "kind": "question", "words": "What is my cat's name?"}
    assert seen_by_b(tmp_path, TEMPLATE, payload) == (
        "Earlier I told you: My cat is Tom.\nMy question: What is my cat's name?")


def test_without_a_template_header_and_fields(tmp_path: Path) -> None:
    payload = {"fact": "", "kind": "other", "words": "Hello."}
    assert seen_by_b(tmp_path, None, payload) == "[asks from a]\nkind: other\nwords: Hello."


def test_render_payload_falls_back_to_json_for_nested_or_multiline_values() -> None:
    assert render_payload({"a": "x", "n": 2, "ok": True}) == "a: x\nn: 2\nok: true"
    assert render_payload({"a": "two\nlines"}) == '{"a": "two\\nlines"}'
    assert render_payload({"a": ["x"]}) == '{"a": ["x"]}'


def test_template_sees_channel_and_sender() -> None:
    template = compile_message_template("{{ sender }} on {{ channel }}: {{ text }}", "c")
    item = Incoming(text="hi", channel="c", sender="ann", payload={"text": "hi"})
    assert item.render(template) == "ann on c: hi"


def test_template_may_not_reach_private_attributes() -> None:
    with pytest.raises(TemplateError):
        compile_message_template("{{ text.__class__ }}", "c")


def test_header_hint_left_out_when_every_listened_channel_is_templated(tmp_path: Path) -> None:
    team = load_team(team_dir(tmp_path, TEMPLATE))
    hint = "arrive as new input headed [channel from sender]"

    def prefix(name: str) -> str:
        parts = assemble(team, name)
        return PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0)).prefix

    assert hint not in prefix("b")
    assert hint in prefix("a")
