"""The ``xml`` call format: XML-shaped tags, read leniently and one call at a time.

::

    <send_message channel="general" text="hi"/>
    <send_message channel="general">
    <text>
    first line
    second line
    </text>
    </send_message>

Short values go in double- or single-quoted attributes; long or multi-line values in child
elements ``<key>value</key>`` (one newline right after ``<key>`` and one right before
``</key>`` are layout, not value). Attribute and child values understand the entities
``&lt; &gt; &amp; &quot; &apos;`` and ``&#NN;``/``&#xNN;``; any other ``&`` is literal.
The first ``</name>`` always ends the call, so mismatched closes and other tags inside a
call are argument text. This is not an XML parser: the model's text is not a document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from terrarium.formats.base import CallFormat, CallSpec, StreamParser
from terrarium.formats.convert import value_to_text
from terrarium.formats.scan import (
    NAME_CHARS,
    NAME_START,
    OpenMatch,
    TagStreamParser,
    TagSyntax,
    known_prefix,
)

_ENTITY_RE = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
_CHILD_OPEN_RE = re.compile(r"<([A-Za-z_][A-Za-z0-9_.\-]*)\s*(/?)>")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_WS = frozenset(" \t\r\n")
# values of unknown tags may not hold these, so a stray "<b" cannot swallow a real call
_UNKNOWN_STOP_RE = re.compile(r"[<>\n]")


def _entity(m: re.Match[str]) -> str:
    ref = m.group(1)
    if ref in _NAMED:
        return _NAMED[ref]
    code = int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:])
    try:
        return chr(code)
    except (ValueError, OverflowError):
        return m.group(0)


def unescape(text: str) -> str:
    """Replace the XML entities this format understands; leave every other ``&`` alone."""
    return _ENTITY_RE.sub(_entity, text) if "&" in text else text


def escape_attr(text: str) -> str:
    """Escape an attribute value minimally so :func:`unescape` gives it back exactly."""
    text = _ENTITY_RE.sub(lambda m: "&amp;" + m.group(0)[1:], text)
    return text.replace('"', "&quot;")


def escape_child(text: str) -> str:
    """Escape a child value so it cannot end its element or the call, and reads back exactly."""
    text = _ENTITY_RE.sub(lambda m: "&amp;" + m.group(0)[1:], text)
    return text.replace("</", "&lt;/")


def _read_attribute(buf: str, i: int, is_known: bool) -> tuple[str, str, int] | int | None:
    """One ``key="value"`` of an opening tag, from ``buf[i]`` (a name character): the key,
    the unescaped value and the index after it; None when the buffer ends first (more is
    needed); else the index where the tag cannot go on. In a tag of an unknown name a value
    may not hold ``<``, ``>`` or a newline, so a stray ``<b`` cannot swallow a real call."""
    n = len(buf)
    start = i
    while i < n and buf[i] in NAME_CHARS:
        i += 1
    key = buf[start:i]
    while i < n and buf[i] in " \t":
        i += 1
    if i == n:
        return None
    if buf[i] != "=":
        return i
    i += 1
    while i < n and buf[i] in " \t":
        i += 1
    if i == n:
        return None
    quote = buf[i]
    if quote not in "\"'":
        return i
    vstart = i + 1
    i = buf.find(quote, vstart)
    if not is_known:
        stop = _UNKNOWN_STOP_RE.search(buf, vstart, n if i < 0 else i)
        if stop is not None:
            return stop.start()
    if i < 0:
        return None
    return key, unescape(buf[vstart:i]), i + 1


class XmlSyntax(TagSyntax):
    """Opening ``<name attr="v">`` or ``<name/>``, child arguments, closing ``</name>``."""

    start_char = "<"

    def match_open(self, buf: str, known: Mapping[str, CallSpec]) -> OpenMatch:
        n = len(buf)
        if n < 2:
            return OpenMatch("more", known_viable=bool(known))
        if buf[1] not in NAME_START:
            return OpenMatch("fail", end=1)
        i = 2
        while i < n and buf[i] in NAME_CHARS:
            i += 1
        name = buf[1:i]
        if i == n:
            return OpenMatch("more", name=name, known_viable=known_prefix(name, known))
        is_known = name in known
        attrs: dict[str, str] = {}
        dupes: list[str] = []

        def more() -> OpenMatch:
            return OpenMatch("more", name=name, known_viable=is_known, name_done=True)

        def done(end: int, closed: bool) -> OpenMatch:
            if not is_known:
                return OpenMatch("unknown", end=end, name=name)
            error = None
            if dupes:
                error = " ".join(f"Argument '{d}' of call '{name}' was given twice." for d in dupes)
            return OpenMatch("open", end=end, name=name, attrs=attrs, closed=closed, error=error)

        while True:
            # here: just after the name or after a complete attribute
            if i == n:
                return more()
            c = buf[i]
            if c == ">":
                return done(i + 1, closed=False)
            if c == "/":
                if i + 1 == n:
                    return more()
                if buf[i + 1] == ">":
                    return done(i + 2, closed=True)
                return OpenMatch("fail", end=i + 1)
            if c not in _WS:
                return OpenMatch("fail", end=i)
            while i < n and buf[i] in _WS:
                if not is_known and buf[i] == "\n":
                    return OpenMatch("fail", end=i)
                i += 1
            if i == n:
                return more()
            if buf[i] in ">/":
                continue
            if buf[i] not in NAME_START:
                return OpenMatch("fail", end=i)
            got = _read_attribute(buf, i, is_known)
            if got is None:
                return more()
            if isinstance(got, int):
                return OpenMatch("fail", end=got)
            key, value, i = got
            if key in attrs:
                dupes.append(key)
            attrs[key] = value

    def close_tag(self, name: str) -> str:
        return f"</{name}>"

    def parse_body(self, name: str, body: str) -> tuple[dict[str, str], str | None]:
        args: dict[str, str] = {}
        problems: list[str] = []
        i, n = 0, len(body)
        while True:
            while i < n and body[i] in _WS:
                i += 1
            if i == n:
                break
            m = _CHILD_OPEN_RE.match(body, i)
            if m is None:
                problems.append(
                    f"Call '{name}' has text outside its argument elements "
                    f"({body[i : i + 60]!r}); write each argument as <key>value</key>."
                )
                break
            key = m.group(1)
            if m.group(2):
                value = ""
                i = m.end()
            else:
                end = body.find(f"</{key}>", m.end())
                if end < 0:
                    problems.append(
                        f"Argument element <{key}> of call '{name}' was never closed with </{key}>."
                    )
                    break
                value = body[m.end() : end]
                value = value.removeprefix("\n")
                value = value.removesuffix("\n")
                i = end + len(key) + 3
            if key in args:
                problems.append(f"Argument '{key}' of call '{name}' was given twice.")
            args[key] = unescape(value)
        return args, " ".join(problems) or None


# Rendered examples put short scalar values in attributes and the rest (long, multi-line or
# JSON values, and everything after the first such) in child elements: the same shape the
# grammar allows when arguments come in declaration order.
LONG_VALUE = 60


@dataclass(slots=True)
class XmlFormat(CallFormat):
    """``<name key="value"/>`` or ``<name>`` with ``<key>value</key>`` children."""

    name: ClassVar[str] = "xml"

    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        attrs: list[str] = []
        children: list[str] = []
        for key, value in args.items():
            if value is None:
                continue
            text = value_to_text(value)
            structured = isinstance(value, (list, tuple, set, frozenset, dict, BaseModel))
            if children or structured or "\n" in text or len(text) > LONG_VALUE:
                inner = escape_child(text)
                if "\n" in text:
                    inner = f"\n{inner}\n"
                children.append(f"<{key}>{inner}</{key}>")
            else:
                attrs.append(f' {key}="{escape_attr(text)}"')
        head = f"<{name}{''.join(attrs)}"
        if not children:
            return head + "/>"
        return head + ">\n" + "\n".join(children) + f"\n</{name}>"

    def new_parser(self) -> StreamParser:
        return TagStreamParser(XmlSyntax(), self.specs)

    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        example = self.render_call(example_name, example_args)
        return (
            "To make a call, write a tag named after the call with each argument as an "
            'attribute, like <name key="value"/>; for a long or multi-line value, open the '
            "tag with <name>, put the argument in a child element <key>value</key>, and close "
            "with </name>. Only the calls listed here exist; everything else you write is "
            f"plain text. For example:\n\n{example}"
        )


__all__ = [
    "LONG_VALUE",
    "XmlFormat",
    "XmlSyntax",
    "escape_attr",
    "escape_child",
    "unescape",
]
