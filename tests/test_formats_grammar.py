"""GBNF grammars: well-formed, and in agreement with the parsers.

A small GBNF reader in this file (the subset the generator emits: literals, character
classes, groups, alternation, ``* + ?`` and ``{m,n}``) recognises strings and samples random
strings from a grammar. Sampled strings must always parse into valid calls with no notices,
which is what grammar-constrained decoding promises a small model. That llama.cpp itself
accepts these grammars was checked by hand against the embedded model (see the report).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
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

# --- a tiny GBNF engine -------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Cls:
    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def has(self, c: str) -> bool:
        inside = any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[object, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[object, ...]


@dataclass(frozen=True)
class Rep:
    item: object
    lo: int
    hi: int | None


_ESC = {"n": "\n", "t": "\t", "r": "\r"}


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def char(self) -> str:
        c = self.s[self.i]
        self.i += 1
        if c == "\\":
            e = self.s[self.i]
            self.i += 1
            return _ESC.get(e, e)
        return c

    def alt(self) -> object:
        options = [self.seq()]
        while self.i < len(self.s) and self.s[self.i] == "|":
            self.i += 1
            options.append(self.seq())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def seq(self) -> object:
        items: list[object] = []
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] in "|)":
                return Seq(tuple(items))
            items.append(self.postfix(self.atom()))

    def atom(self) -> object:
        c = self.s[self.i]
        if c == '"':
            self.i += 1
            out = ""
            while self.s[self.i] != '"':
                out += self.char()
            self.i += 1
            return Lit(out)
        if c == "[":
            self.i += 1
            negated = self.s[self.i] == "^"
            self.i += negated
            ranges: list[tuple[str, str]] = []
            while self.s[self.i] != "]":
                lo = self.char()
                hi = lo
                if self.s[self.i] == "-" and self.s[self.i + 1] != "]":
                    self.i += 1
                    hi = self.char()
                ranges.append((lo, hi))
            self.i += 1
            return Cls(negated, tuple(ranges))
        if c == "(":
            self.i += 1
            inner = self.alt()
            assert self.s[self.i] == ")", self.s[self.i :]
            self.i += 1
            return inner
        m = re.compile(r"[a-z0-9-]+").match(self.s, self.i)
        assert m, f"unexpected {self.s[self.i :]!r}"
        self.i = m.end()
        return Ref(m.group(0))

    def postfix(self, node: object) -> object:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in "*+?":
                self.i += 1
                node = Rep(node, 1 if c == "+" else 0, 1 if c == "?" else None)
            elif c == "{":
                end = self.s.index("}", self.i)
                lo, _, hi = self.s[self.i + 1 : end].partition(",")
                self.i = end + 1
                node = Rep(node, int(lo), int(hi) if hi else None)
            else:
                break
        return node


def read_gbnf(text: str) -> dict[str, object]:
    rules: dict[str, object] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, body = line.partition(" ::= ")
        assert sep and re.fullmatch(r"[a-z0-9-]+", name), line
        assert name not in rules, f"rule {name} defined twice"
        r = _Reader(body)
        rules[name] = r.alt()
        assert r.i == len(body), f"trailing text in {line!r}"
    return rules


def refs(node: object) -> set[str]:
    if isinstance(node, Ref):
        return {node.name}
    if isinstance(node, Seq):
        return set().union(*(refs(i) for i in node.items)) if node.items else set()
    if isinstance(node, Alt):
        return set().union(*(refs(o) for o in node.options))
    if isinstance(node, Rep):
        return refs(node.item)
    return set()


def accepts(rules: dict[str, object], text: str) -> bool:
    @cache
    def ends(node: object, i: int) -> frozenset[int]:
        if isinstance(node, Lit):
            return frozenset({i + len(node.text)}) if text.startswith(node.text, i) else frozenset()
        if isinstance(node, Cls):
            return frozenset({i + 1}) if i < len(text) and node.has(text[i]) else frozenset()
        if isinstance(node, Ref):
            return ends(rules[node.name], i)
        if isinstance(node, Seq):
            cur = frozenset({i})
            for item in node.items:
                cur = frozenset(e for p in cur for e in ends(item, p))
            return cur
        if isinstance(node, Alt):
            return frozenset(e for o in node.options for e in ends(o, i))
        assert isinstance(node, Rep)
        out: set[int] = {i} if node.lo == 0 else set()
        frontier, count = {i}, 0
        while frontier and (node.hi is None or count < node.hi):
            count += 1
            frontier = {e for p in frontier for e in ends(node.item, p)} - (
                out if node.hi is None else set()
            )
            if count >= node.lo:
                out |= frontier
        return frozenset(out)

    return len(text) in ends(rules["root"], 0)


ALPHABET = "ab Z09_\n\t[]/<>@=&;\"'{}:,.-#x"


class TooDeep(Exception):
    pass


def sample(rules: dict[str, object], rng: random.Random) -> str:
    out: list[str] = []

    def gen(node: object, depth: int) -> None:
        if depth > 60:
            raise TooDeep
        if isinstance(node, Lit):
            out.append(node.text)
        elif isinstance(node, Cls):
            out.append(rng.choice([c for c in ALPHABET if node.has(c)]))
        elif isinstance(node, Ref):
            gen(rules[node.name], depth + 1)
        elif isinstance(node, Seq):
            for item in node.items:
                gen(item, depth + 1)
        elif isinstance(node, Alt):
            gen(rng.choice(node.options), depth + 1)
        else:
            assert isinstance(node, Rep)
            hi = node.lo + 3 if node.hi is None else min(node.hi, node.lo + 3)
            for _ in range(rng.randint(node.lo, hi)):
                gen(node.item, depth + 1)

    gen(rules["root"], 0)
    return "".join(out)


# --- the specs ----------------------------------------------------------------------------


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
    assert accepts({"root": _Reader(gbnf_literal(text)).alt()}, text)


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


@pytest.mark.parametrize("name", ["bracket", "xml"])
def test_free_text_values_are_one_line_unless_multiline(name: str) -> None:
    fmt = get_format(name, [CallSpec("note", "Note.", Note)])
    rules = read_gbnf(grammar_for(fmt, allow_text=False))
    assert accepts(rules, fmt.render_call("note", {"text": "one line"}))
    assert not accepts(rules, fmt.render_call("note", {"text": "two\nlines"}))
