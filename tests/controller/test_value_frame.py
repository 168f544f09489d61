"""Value frames: a calls-only creature with one one-line argument writes only the value."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from pydantic import BaseModel, Field

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.formats import CallSpec, get_format, value_frame
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta


class One(BaseModel):
    summary: str


class Two(BaseModel):
    summary: str
    mood: str = ""


class Count(BaseModel):
    n: int


class Pick(BaseModel):
    mood: Literal["happy", "sad"]


class Body(BaseModel):
    body: str = Field(json_schema_extra={"multiline": True})


def frame_of(fmt: str, *models: type[BaseModel]) -> Any:
    specs = [CallSpec(f"send_{i}", "d", m) for i, m in enumerate(models)]
    return value_frame(get_format(fmt, specs))


@pytest.mark.parametrize("fmt", ["bracket", "xml"])
def test_frame_around_the_one_value_parses_back(fmt: str) -> None:
    frame = frame_of(fmt, One)
    assert frame is not None and frame.call == "send_0" and frame.field == "summary"
    events = get_format(fmt, [CallSpec("send_0", "d", One)]).parse(
        frame.prefix + "the user greets us" + frame.suffix)
    assert len(events) == 1 and events[0].args == One(summary="the user greets us")
    assert "root ::=" in frame.grammar and "200" in frame.grammar


def test_bracket_frame_text() -> None:
    frame = frame_of("bracket", One)
    assert (frame.prefix, frame.suffix) == ("[/send_0]\n@@summary=", "\n[send_0/]")
    # the model ends its value with the suffix's first character; the grammar then ends
    assert frame.grammar.startswith('root ::= bline "\\n"\n')
    assert frame.close("done\n") == "[send_0/]"
    assert frame.close("cut off by max_tokens") == "\n[send_0/]"


@pytest.mark.parametrize("fmt", ["bracket", "xml"])
def test_a_choice_is_framed_as_its_allowed_values(fmt: str) -> None:
    frame = frame_of(fmt, Pick)
    assert frame is not None
    root = frame.grammar.splitlines()[0]
    assert '"happy" | "sad"' in root
    events = get_format(fmt, [CallSpec("send_0", "d", Pick)]).parse(
        frame.prefix + "sad" + frame.suffix)
    assert events[0].args == Pick(mood="sad")


@pytest.mark.parametrize("models", [(One, One), (Two,), (Count,), (Body,)])
def test_no_frame_unless_one_call_of_one_line(models: tuple[type[BaseModel], ...]) -> None:
    assert frame_of("bracket", *models) is None


def test_no_frame_for_native_calls() -> None:
    assert frame_of("native", One) is None


TEAM = """\
terrarium:
  name: framed
  input_channel: inbox
  creatures:
    - name: r
      config: r
      channels: {listen: [inbox], can_send: [notes]}
    - name: s
      config: s
      channels: {listen: [notes]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
    notes: {type: queue, schema: {fields: {summary: str}}}
"""


def write_team(tmp_path: Path) -> Path:
    (tmp_path / "terrarium.yaml").write_text(TEAM)
    for name, extra in (("r", "tool_choice: required\nmax_iterations: 1\n"), ("s", "")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(
            f"name: {name}\n{extra}")
    return tmp_path


class Continuing:
    """A model that can continue a reply it was given the start of."""

    name = "continuing"
    supports_continuation = True
    last_usage = None

    def __init__(self, value: str) -> None:
        self.value = value
        self.requests: list[ChatRequest] = []

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.requests.append(request)
        for i in range(0, len(self.value), 3):
            yield StreamDelta(text=self.value[i:i + 3])


def run_r(tmp_path: Path, model: Any) -> tuple[list[dict[str, Any]], Controller]:
    parts = assemble(load_team(write_team(tmp_path)), "r")
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append({"channel": channel, **payload})
        return 1

    ctl = Controller(parts, model, send=send)

    async def go() -> None:
        with anyio.fail_after(10):
            await ctl.run_turn([Incoming(text="hi", channel="inbox", sender="user",
                                         payload={"text": "hi"})])

    anyio.run(go)
    return sent, ctl


@pytest.mark.parametrize("ending", ["", "\n"])
def test_model_writes_only_the_value_and_the_call_is_sent(tmp_path: Path, ending: str) -> None:
    model = Continuing("the user says hi" + ending)
    sent, ctl = run_r(tmp_path, model)
    assert sent == [{"channel": "notes", "summary": "the user says hi"}]
    frame = ctl.frame
    assert frame is not None
    (request,) = model.requests
    assert request.messages[-1].role == "assistant"
    assert request.messages[-1].content == frame.prefix == "[/send_notes]\n@@summary="
    assert request.grammar == frame.grammar
    # the history holds the whole call, as if the model had written all of it
    assert ctl.conversation[-1].role == "assistant"
    assert ctl.conversation[-1].content == frame.prefix + "the user says hi" + frame.suffix


def test_models_that_cannot_continue_write_the_whole_call(tmp_path: Path) -> None:
    model = ScriptedModel(["[/send_notes]\n@@summary=whole call\n[send_notes/]"])
    sent, ctl = run_r(tmp_path, model)
    assert sent == [{"channel": "notes", "summary": "whole call"}]
    (request,) = model.requests
    assert request.messages[-1].role == "user"
    assert request.grammar == ctl.grammar
