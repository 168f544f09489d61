"""GBNF grammars: well-formed, and in agreement with the parsers.

A small GBNF reader (tests/gbnf_engine.py; the subset the generator emits: literals, character
classes, groups, alternation, ``* + ?`` and ``{m,n}``) recognises strings and samples random
strings from a grammar. Sampled strings must always parse into valid calls with no notices,
which is what grammar-constrained decoding promises a small model. That llama.cpp itself
accepts these grammars was checked by hand against the embedded model (see the report).
"""

from __future__ import annotations

import random
from functools import cache
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from terrarium.formats import (
    CallEvent,
    CallFormat,
    CallSpec,
    FormatError,
    NoticeEvent,
    get_format,
    grammar_for,
)
from terrarium.formats.grammar import gbnf_literal
from tests.formats_fixtures import Mode, Nothing
from tests.gbnf_engine import Reader, TooDeep, accepts, read_gbnf, refs, sample


class Send(BaseModel):
    model_config = ConfigDict(extra="forbid")
    channel: str
    text: str = Field(json_schema_extra={"multiline": True})


class Configure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flag: bool
    count: int = 0
    ratio: float = 1.0
    mode: Mode = Mode.FAST
    level: Literal["low", "high"] = "low"
    tags: list[str] = []
    sizes: list[int] = []
    extra: dict[str, int] = {}
    note: str | None = None




SPECS = [
    CallSpec("send_message", "Send a message.", Send),
    CallSpec("configure", "Change settings.", Configure),
    CallSpec("info", "Show docs.", Nothing),
    CallSpec("send", "Prefix of another name.", Send),
]
TEXT_FORMATS = ["bracket", "xml"]


@cache
def fmt_and_rules(name: str, allow_text: bool) -> tuple[CallFormat, dict[str, object]]:
    fmt = get_format(name, SPECS)
    return fmt, read_gbnf(grammar_for(fmt, allow_text=allow_text))


@pytest.mark.parametrize("name", TEXT_FORMATS)
@pytest.mark.parametrize("allow_text", [True, False])
def test_grammar_is_well_formed_and_closed(name: str, allow_text: bool) -> None:
    _, rules = fmt_and_rules(name, allow_text)
    assert "root" in rules
    used = set().union(*(refs(body) for body in rules.values()))
    assert used <= set(rules), used - set(rules)


@pytest.mark.parametrize("name", TEXT_FORMATS)
def test_grammar_is_deterministic(name: str) -> None:
    fmt = get_format(name, list(reversed(SPECS)))
    assert grammar_for(fmt) == grammar_for(get_format(name, SPECS))


@pytest.mark.parametrize("name", TEXT_FORMATS)
@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("send_message", {"channel": "general", "text": "hello"}),
        ("send", {"channel": "general", "text": "two\nlines"}),
        ("info", {}),
        ("configure", {"flag": False}),
        ("configure", {"flag": True, "count": 3, "mode": Mode.SLOW, "tags": ["a", "b"]}),
        ("configure", {"flag": True, "sizes": [1, 2], "extra": {"k": 4}, "note": "n"}),
    ],
)
def test_rendered_calls_in_declared_order_are_accepted(
    name: str, call: str, args: dict[str, object]
) -> None:
    fmt, rules = fmt_and_rules(name, True)
    rendered = fmt.render_call(call, args)
    assert accepts(rules, f"Sure. {rendered} Done.")
    _, calls_only = fmt_and_rules(name, False)
    assert accepts(calls_only, rendered)
    assert not accepts(calls_only, f"Sure. {rendered}")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("bracket", "[/nosuch]\n@@a=b\n[nosuch/]"),
        ("bracket", "[/configure]\n@@flag=maybe\n[configure/]"),
        ("bracket", "[/configure]\n@@count=3\n[configure/]"),
        ("bracket", "[/configure]\n@@flag=true\n@@mode=medium\n[configure/]"),
        ("bracket", "[/configure]\n@@flag=true\n@@count=1.5\n[configure/]"),
        ("bracket", "[/configure]\n@@flag=true\n@@colour=red\n[configure/]"),
        ("bracket", "[/send_message]\n@@channel=c\n@@text=t\n[send_message/]"[:-1]),
        ("bracket", "[/send_message]\n@@channel=c\n@@text=a [info/] b\n[send_message/]"),
        ("xml", '<nosuch a="b"/>'),
        ("xml", '<configure flag="maybe"/>'),
        ("xml", '<configure count="3"/>'),
        ("xml", '<configure flag="true" mode="medium"/>'),
        ("xml", '<send_message channel="c" text="t">'),
        ("xml", '<send_message channel="c"><text>a <b> c</text></send_message>'),
        ("xml", "<b>bold</b>"),
    ],
)
def test_malformed_or_unknown_calls_are_rejected(name: str, text: str) -> None:
    _, rules = fmt_and_rules(name, True)
    assert not accepts(rules, text)


@pytest.mark.parametrize("name", TEXT_FORMATS)
@settings(max_examples=120, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_every_string_the_grammar_allows_parses_into_valid_calls(name: str, seed: int) -> None:
    fmt, rules = fmt_and_rules(name, True)
    try:
        text = sample(rules, random.Random(seed))
    except TooDeep:
        return
    for ev in fmt.parse(text):
        assert not isinstance(ev, NoticeEvent), (text, ev)
        if isinstance(ev, CallEvent):
            assert ev.error is None, (text, ev.error)


@pytest.mark.parametrize("name", TEXT_FORMATS)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_calls_only_grammar_yields_calls_and_whitespace(name: str, seed: int) -> None:
    fmt, rules = fmt_and_rules(name, False)
    try:
        text = sample(rules, random.Random(seed))
    except TooDeep:
        return
    events = fmt.parse(text)
    assert any(isinstance(e, CallEvent) for e in events)
    for ev in events:
        if isinstance(ev, CallEvent):
            assert ev.error is None, (text, ev.error)
        else:
            assert not isinstance(ev, NoticeEvent) and not ev.text.strip(), (text, ev)


def test_native_has_no_text_grammar() -> None:
    with pytest.raises(FormatError, match="tool calls"):
        grammar_for(get_format("native", SPECS))


def test_no_specs_grammar_is_text_only() -> None:
    rules = read_gbnf(grammar_for(get_format("bracket", [])))
    assert accepts(rules, "plain words [x]")
    assert not accepts(rules, "[/info]\n[info/]")
    with pytest.raises(FormatError):
        grammar_for(get_format("xml", []), allow_text=False)


@pytest.mark.parametrize("text", ['a"b', "back\\slash", "new\nline\ttab", ""])
def test_gbnf_literal_escapes(text: str) -> None:
    assert accepts({"root": Reader(gbnf_literal(text)).alt()}, text)


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


@pytest.mark.parametrize("name", ["bracket", "xml"])
def test_free_text_values_are_one_line_unless_multiline(name: str) -> None:
    fmt = get_format(name, [CallSpec("note", "Note.", Note)])
    rules = read_gbnf(grammar_for(fmt, allow_text=False))
    assert accepts(rules, fmt.render_call("note", {"text": "one line"}))
    assert not accepts(rules, fmt.render_call("note", {"text": "two\nlines"}))
