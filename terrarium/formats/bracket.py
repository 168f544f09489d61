"""The ``bracket`` call format: line-oriented, so a very small model can write it reliably.

::

    [/send_message]
    @@channel=general
    @@text=first line
    second line
    [send_message/]

The opening line is ``[/name]``; each argument starts a line with ``@@key=`` and its value
runs until the next line starting with ``@@`` or the closing ``[name/]`` (the newline before
either is a separator, not part of the value). The first ``[name/]`` always ends the call:
other openings or mismatched closes inside the body are argument text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from terrarium.errors import FormatError
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


class BracketSyntax(TagSyntax):
    """Opening ``[/name]``, arguments ``@@key=value``, closing ``[name/]``."""

    start_char = "["

    def match_open(self, buf: str, known: Mapping[str, CallSpec]) -> OpenMatch:
        if len(buf) < 2:
            return OpenMatch("more", known_viable=bool(known))
        if buf[1] != "/":
            return OpenMatch("fail", end=1)
        if len(buf) < 3:
            return OpenMatch("more", known_viable=bool(known))
        if buf[2] not in NAME_START:
            return OpenMatch("fail", end=2)
        i = 3
        while i < len(buf) and buf[i] in NAME_CHARS:
            i += 1
        name = buf[2:i]
        if i == len(buf):
            return OpenMatch("more", name=name, known_viable=known_prefix(name, known))
        if buf[i] != "]":
            return OpenMatch("fail", end=i)
        if name in known:
            return OpenMatch("open", end=i + 1, name=name)
        return OpenMatch("unknown", end=i + 1, name=name)

    def close_tag(self, name: str) -> str:
        return f"[{name}/]"

    def parse_body(self, name: str, body: str) -> tuple[dict[str, str], str | None]:
        if body.endswith("\n"):
            body = body[:-1]
        args: dict[str, str] = {}
        problems: list[str] = []
        key: str | None = None
        lines: list[str] = []
        stray: list[str] = []

        def finish() -> None:
            if key is None:
                return
            if key in args:
                problems.append(f"Argument '{key}' of call '{name}' was given twice.")
            args[key] = "\n".join(lines)

        for line in body.split("\n"):
            if line.startswith("@@"):
                finish()
                raw_key, sep, value = line[2:].partition("=")
                key = raw_key.strip()
                lines = [value]
                if not sep or not key:
                    problems.append(
                        f"The line {line!r} in call '{name}' is not of the form @@key=value."
                    )
                    key = None
            elif key is None:
                stray.append(line)
            else:
                lines.append(line)
        finish()
        text = "\n".join(stray).strip()
        if text:
            problems.append(
                f"Call '{name}' has text before its first @@ argument line ({text[:60]!r}); "
                "every argument must start a line with @@key=."
            )
        return args, " ".join(problems) or None


@dataclass(slots=True)
class BracketFormat(CallFormat):
    """``[/name]`` … ``@@key=value`` … ``[name/]``."""

    name: ClassVar[str] = "bracket"

    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        close = f"[{name}/]"
        lines = [f"[/{name}]"]
        for key, value in args.items():
            if value is None:
                continue
            text = value_to_text(value)
            if any(part.startswith("@@") for part in text.split("\n")[1:]):
                raise FormatError(
                    f"The value of argument '{key}' has a line starting with @@, "
                    "which the bracket format cannot write."
                )
            if close in text:
                raise FormatError(
                    f"The value of argument '{key}' contains {close}, "
                    "which would end the call early in the bracket format."
                )
            lines.append(f"@@{key}={text}")
        lines.append(close)
        return "\n".join(lines)

    def new_parser(self) -> StreamParser:
        return TagStreamParser(BracketSyntax(), self.specs)

    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        example = self.render_call(example_name, example_args)
        return (
            "To make a call, write an opening line with the call name in brackets after a "
            "slash, like [/name], then one line per argument starting with @@, the argument "
            "name, = and the value (a long value may continue on the following lines), and "
            "finish with a closing line [name/] with the slash at the end. Only the calls "
            "listed here exist; everything else you write is plain text. For example:\n\n"
            f"{example}"
        )


__all__ = [
    "BracketFormat",
    "BracketSyntax",
]
