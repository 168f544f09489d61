"""The streaming engine shared by the text formats: hold back only what could start a call.

A format supplies a character-by-character opening-tag matcher and a body parser; this
module turns them into a :class:`StreamParser`. Every decision is made at the character
that settles it and never depends on where chunks were cut, so any split of a response
yields the same events after :func:`coalesce` (the parsers' one hard invariant).

Rules every text format shares:

- Plain text is emitted as soon as it cannot be the start of an opening tag of a known
  call. A tag-shaped opening with an unknown name is passed through as text and followed
  by a NoticeEvent listing the known names.
- Calls do not nest: inside a call, everything up to the first closing tag of *that* call
  is its body, so other opening tags and mismatched closing tags are argument text.
- A call still open when the stream closes is returned as text, followed by a notice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from terrarium.errors import FormatError
from terrarium.formats.base import (
    CallEvent,
    CallSpec,
    NoticeEvent,
    ParseEvent,
    StreamParser,
    TextEvent,
)
from terrarium.formats.convert import validate_call

NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
NAME_CHARS = NAME_START | frozenset("0123456789-.")


@dataclass(slots=True)
class OpenMatch:
    """What a matcher learned from the text at a possible tag start.

    ``more``: undecided; ``known_viable`` says whether it could still open a known call.
    ``fail``: not a tag; ``end`` is the first character that broke it (always >= 1).
    ``unknown``: a complete tag-shaped opening with an unknown ``name``, ``end`` long.
    ``open``: a known call opens; ``closed`` when it needs no body (XML ``<name/>``).
    """

    kind: Literal["more", "fail", "unknown", "open"]
    end: int = 0
    name: str = ""
    known_viable: bool = False
    name_done: bool = False
    attrs: dict[str, str] = field(default_factory=dict)
    closed: bool = False
    error: str | None = None


class TagSyntax(ABC):
    """The pieces of a text format the streaming engine needs."""

    start_char: str

    @abstractmethod
    def match_open(self, buf: str, known: Mapping[str, CallSpec]) -> OpenMatch:
        """Classify ``buf``, which starts with ``start_char``."""

    @abstractmethod
    def close_tag(self, name: str) -> str:
        """The exact text that ends the body of call ``name``."""

    @abstractmethod
    def parse_body(self, name: str, body: str) -> tuple[dict[str, str], str | None]:
        """Arguments written in a call body, and an error sentence if it is malformed."""


def unknown_notice(name: str, known: Mapping[str, CallSpec]) -> NoticeEvent:
    """Tell the model a call name does not exist and what does."""
    if known:
        names = ", ".join(sorted(known))
        return NoticeEvent(
            f"'{name}' is not a known call, so it was treated as plain text; "
            f"the calls you can make are: {names}."
        )
    return NoticeEvent(
        f"'{name}' is not a known call, so it was treated as plain text; "
        "no calls are available here."
    )


def make_call(
    spec: CallSpec, attrs: Mapping[str, str], body_args: Mapping[str, str], error: str | None
) -> CallEvent:
    """Merge the two places arguments can be written, then convert and validate them."""
    raw: dict[str, str] = dict(attrs)
    problems = [error] if error else []
    for key, value in body_args.items():
        if key in raw:
            problems.append(f"Argument '{key}' of call '{spec.name}' was given twice.")
        raw[key] = value
    if problems:
        return CallEvent(spec.name, raw, error=" ".join(problems))
    return validate_call(spec, raw)


class TagStreamParser(StreamParser):
    """Streaming parser over a :class:`TagSyntax`; see the module docstring for the rules."""

    def __init__(self, syntax: TagSyntax, specs: Mapping[str, CallSpec]) -> None:
        self._syntax = syntax
        self._specs = specs
        self._buf = ""
        self._candidate = False  # _buf starts at a possible tag start
        self._emitted = 0  # chars of the candidate already emitted as text
        self._open: OpenMatch | None = None  # the call whose body we are in
        self._open_text = ""
        self._close = ""
        self._searched = 0
        self._closed = False

    def feed(self, chunk: str) -> list[ParseEvent]:
        if self._closed:
            raise FormatError("This parser was already closed; start a new one per response.")
        self._buf += chunk
        return self._run(final=False)

    def close(self) -> list[ParseEvent]:
        if self._closed:
            return []
        out = self._run(final=True)
        self._closed = True
        return out

    def _run(self, *, final: bool) -> list[ParseEvent]:
        out: list[ParseEvent] = []
        while True:
            if self._open is not None:
                if not self._in_body(out, final=final):
                    return out
                continue
            if not self._candidate:
                i = self._buf.find(self._syntax.start_char)
                if i < 0:
                    self._text(out, self._buf)
                    self._buf = ""
                    return out
                self._text(out, self._buf[:i])
                self._buf = self._buf[i:]
                self._candidate = True
                self._emitted = 0
            m = self._syntax.match_open(self._buf, self._specs)
            if m.kind == "more":
                if final:
                    self._text(out, self._buf[self._emitted :])
                    if m.name_done and m.known_viable:
                        out.append(
                            NoticeEvent(
                                f"The opening of call '{m.name}' was never finished, "
                                "so nothing was called."
                            )
                        )
                    self._buf = ""
                    self._candidate = False
                    return out
                if not m.known_viable:
                    self._text(out, self._buf[self._emitted :])
                    self._emitted = len(self._buf)
                return out
            if m.kind == "fail":
                self._text(out, self._buf[self._emitted : m.end])
                self._buf = self._buf[m.end :]
                self._candidate = False
                continue
            if m.kind == "unknown":
                self._text(out, self._buf[self._emitted : m.end])
                out.append(unknown_notice(m.name, self._specs))
                self._buf = self._buf[m.end :]
                self._candidate = False
                continue
            # a known call opens; nothing of it was emitted because it was always viable
            self._candidate = False
            spec = self._specs[m.name]
            if m.closed:
                out.append(make_call(spec, m.attrs, {}, m.error))
                self._buf = self._buf[m.end :]
                continue
            self._open = m
            self._open_text = self._buf[: m.end]
            self._buf = self._buf[m.end :]
            self._close = self._syntax.close_tag(m.name)
            self._searched = 0

    def _in_body(self, out: list[ParseEvent], *, final: bool) -> bool:
        """Look for the end of the open call; True when it ended and scanning goes on."""
        assert self._open is not None
        j = self._buf.find(self._close, self._searched)
        if j < 0:
            if final:
                name = self._open.name
                self._text(out, self._open_text + self._buf)
                out.append(
                    NoticeEvent(
                        f"The call '{name}' was never closed with {self._close}, "
                        "so nothing was called."
                    )
                )
                self._buf = ""
                self._open = None
                return False
            self._searched = max(0, len(self._buf) - len(self._close) + 1)
            return False
        m = self._open
        body_args, error = self._syntax.parse_body(m.name, self._buf[:j])
        out.append(make_call(self._specs[m.name], m.attrs, body_args, _join(m.error, error)))
        self._buf = self._buf[j + len(self._close) :]
        self._open = None
        return True

    @staticmethod
    def _text(out: list[ParseEvent], text: str) -> None:
        if text:
            out.append(TextEvent(text))


def _join(a: str | None, b: str | None) -> str | None:
    if a and b:
        return f"{a} {b}"
    return a or b


def known_prefix(name: str, specs: Mapping[str, CallSpec]) -> bool:
    """Whether ``name`` could still grow into a known call name."""
    return any(k.startswith(name) for k in specs)


__all__ = [
    "NAME_CHARS",
    "NAME_START",
    "OpenMatch",
    "TagStreamParser",
    "TagSyntax",
    "known_prefix",
    "make_call",
    "unknown_notice",
]
