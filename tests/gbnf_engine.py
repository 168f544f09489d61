"""A tiny GBNF engine for tests: reads the subset the generator emits (literals, character
classes, groups, alternation, ``* + ?`` and ``{m,n}``), recognises strings and samples random
strings from a grammar. Shared by the grammar tests and the MCP tests."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache

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


class Reader:
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
        r = Reader(body)
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
