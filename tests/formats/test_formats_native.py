"""The native format (API tool calls), the factory, and argument conversion on its own."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from terrarium.formats import (
    FORMAT_NAMES,
    CallEvent,
    CallSpec,
    FormatError,
    NativeFormat,
    NoticeEvent,
    TextEvent,
    coalesce,
    get_format,
    openai_tools,
    validate_call,
)
from terrarium.formats.convert import field_kind
from tests.formats_fixtures import Mode, Send


class Configure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flag: bool
    count: int = 0
    mode: Mode = Mode.FAST
    level: Literal["low", "high"] = "low"
    tags: list[str] = []


SPECS = [
    CallSpec("send_message", "Send a message.", Send),
    CallSpec("configure", "Change settings.", Configure),
]
NATIVE = get_format("native", SPECS)
assert isinstance(NATIVE, NativeFormat)


def test_factory_names_and_errors() -> None:
    assert FORMAT_NAMES == ("bracket", "native", "xml")
    for name in FORMAT_NAMES:
        fmt = get_format(name, {s.name: s for s in SPECS})
        assert fmt.name == name
        assert list(fmt.specs) == ["configure", "send_message"]
    with pytest.raises(FormatError, match="not a call format"):
        get_format("json", SPECS)
    with pytest.raises(FormatError, match="given twice"):
        get_format("xml", [*SPECS, SPECS[0]])
    with pytest.raises(FormatError, match="registered as"):
        get_format("xml", {"other": SPECS[0]})


def test_native_parser_passes_text_through() -> None:
    parser = NATIVE.new_parser()
    text = 'hello [/send_message] <configure flag="1"/> {"name": "x"}'
    events = parser.feed(text[:7]) + parser.feed(text[7:]) + parser.close()
    assert coalesce(events) == [TextEvent(text)]
    assert not NATIVE.textual


def test_openai_tools_are_json_schema_functions() -> None:
    tools = openai_tools(SPECS)
    assert [t["function"]["name"] for t in tools] == ["configure", "send_message"]
    send = tools[1]
    assert send["type"] == "function"
    assert send["function"]["description"] == "Send a message."
    params = send["function"]["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["channel", "text"]
    assert params["properties"]["text"]["description"] == "what to say"
    assert params["additionalProperties"] is False
    assert NATIVE.openai_tools() == tools
    json.dumps(tools)  # must be serialisable as-is


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"flag": false}', Configure(flag=False)),
        ('{"flag": "false"}', Configure(flag=False)),
        ('{"flag": "no", "count": "4"}', Configure(flag=False, count=4)),
        (
            {"flag": True, "mode": "slow", "tags": ["a"]},
            Configure(flag=True, mode=Mode.SLOW, tags=["a"]),
        ),
        ('{"flag": true, "tags": "[\\"x\\"]"}', Configure(flag=True, tags=["x"])),
    ],
)
def test_native_calls_convert_and_validate(arguments: object, expected: Configure) -> None:
    ev = NATIVE.call_from_native("configure", arguments, call_id="c1")  # type: ignore[arg-type]
    assert isinstance(ev, CallEvent)
    assert ev.error is None, ev.error
    assert ev.args == expected and ev.call_id == "c1"


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ("{not json", ["not valid JSON"]),
        ("[1, 2]", ["JSON object"]),
        ('{"flag": "maybe"}', ["flag", "true or false"]),
        ('{"flag": 2}', ["flag", "true or false"]),
        ('{"flag": true, "count": "x"}', ["count", "whole number"]),
        ('{"flag": true, "colour": "red"}', ["no argument 'colour'"]),
        ("", ["'flag'", "required"]),
    ],
)
def test_native_refusals_are_sentences(arguments: str, words: list[str]) -> None:
    ev = NATIVE.call_from_native("configure", arguments, call_id="c9")
    assert isinstance(ev, CallEvent) and ev.args is None and ev.call_id == "c9"
    assert ev.error is not None and ev.error.endswith(".")
    for word in words:
        assert word in ev.error


def test_native_unknown_name_is_a_notice() -> None:
    ev = NATIVE.call_from_native("nosuch", "{}")
    assert isinstance(ev, NoticeEvent)
    assert "'nosuch'" in ev.text and "configure, send_message" in ev.text


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("send_message", {"channel": "general", "text": "multi\nline [/x] <y>"}),
        ("configure", {"flag": False, "mode": Mode.SLOW, "tags": ["a", "b"]}),
        ("configure", {"flag": True, "level": "high", "count": 0}),
    ],
)
def test_native_render_round_trips(name: str, args: dict[str, object]) -> None:
    text = NATIVE.render_call(name, args)
    assert json.loads(text)["name"] == name
    ev = NATIVE.call_from_rendered(text)
    assert isinstance(ev, CallEvent) and ev.error is None
    spec = {s.name: s for s in SPECS}[name]
    assert ev.args == spec.args_model.model_validate(args)


def test_native_syntax_help_describes_no_text_syntax() -> None:
    help_text = NATIVE.syntax_help("send_message", {"channel": "general", "text": "hi"})
    assert "send_message" in help_text and '"channel": "general"' in help_text
    for marker in ("[/", "@@", "</", "/>", "<send_message"):
        assert marker not in help_text


def test_syntax_help_is_deterministic_and_differs_per_format() -> None:
    texts = {
        n: get_format(n, SPECS).syntax_help("send_message", {"channel": "g", "text": "t"})
        for n in FORMAT_NAMES
    }
    assert len(set(texts.values())) == 3
    for n in FORMAT_NAMES:
        again = get_format(n, SPECS).syntax_help("send_message", {"channel": "g", "text": "t"})
        assert again == texts[n]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True), ("TRUE", True), ("yes", True), ("1", True), (" Yes ", True),
        ("false", False), ("False", False), ("no", False), ("0", False), (" NO ", False),
        (True, True), (False, False),
    ],
)  # fmt: skip
def test_bool_words(value: object, expected: bool) -> None:
    ev = validate_call(SPECS[1], {"flag": value})
    assert ev.error is None and ev.args is not None
    assert ev.args.flag is expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["maybe", "", "2", "on", "off", "t", "nope", 1, 0, None])
def test_other_bool_values_are_refused(value: object) -> None:
    ev = validate_call(SPECS[1], {"flag": value})
    assert ev.args is None and ev.error is not None and "flag" in ev.error


def test_all_problems_are_reported_together() -> None:
    ev = validate_call(SPECS[1], {"flag": "maybe", "count": "x", "bogus": "1"})
    assert ev.error is not None
    assert "flag" in ev.error and "count" in ev.error and "bogus" in ev.error


def test_missing_required_argument() -> None:
    ev = validate_call(SPECS[0], {"channel": "c"})
    assert ev.error == "Argument 'text' of call 'send_message' is required but was not given."


def test_field_kinds() -> None:
    fields = Configure.model_fields
    assert field_kind(fields["flag"].annotation).kind == "bool"
    assert field_kind(fields["mode"].annotation).choices == ("fast", "slow")
    assert field_kind(fields["level"].annotation).choices == ("low", "high")
    tags = field_kind(fields["tags"].annotation)
    assert tags.kind == "json" and tags.container == "list" and tags.item is not None
    assert tags.item.kind == "str"
    assert field_kind(int | None).optional
    assert field_kind(int | str).kind == "any"


@pytest.mark.parametrize("bad", ["send message", "9lives", "", "a/b", "x]"])
def test_call_names_that_no_text_format_could_parse_are_refused(bad: str) -> None:
    with pytest.raises(FormatError, match="cannot be a call name"):
        get_format("bracket", [CallSpec(bad, "x", Send)])


def test_a_closed_parser_refuses_more_text() -> None:
    parser = get_format("bracket", SPECS).new_parser()
    parser.close()
    assert parser.close() == []
    with pytest.raises(FormatError, match="already closed"):
        parser.feed("more")
