"""Call formats: how a model writes calls, how they are parsed back, and their grammars.

``get_format(name, specs)`` is the one way in; ``FORMAT_NAMES`` lists the names a creature
config may use for ``tool_format``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from terrarium.errors import FormatError
from terrarium.formats.base import (
    CallEvent,
    CallFormat,
    CallSpec,
    NoticeEvent,
    ParseEvent,
    StreamParser,
    TextEvent,
    coalesce,
    output_call_name,
    send_call_name,
)
from terrarium.formats.bracket import BracketFormat
from terrarium.formats.convert import validate_call
from terrarium.formats.grammar import ValueFrame, grammar_for, value_frame
from terrarium.formats.native import NativeFormat, openai_tools
from terrarium.formats.xml import XmlFormat

_FORMATS: dict[str, type[CallFormat]] = {
    BracketFormat.name: BracketFormat,
    XmlFormat.name: XmlFormat,
    NativeFormat.name: NativeFormat,
}
FORMAT_NAMES: tuple[str, ...] = tuple(sorted(_FORMATS))
_CALL_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def spec_map(specs: Mapping[str, CallSpec] | Iterable[CallSpec]) -> dict[str, CallSpec]:
    """Specs keyed by name, sorted; a name given twice is an error, not a silent override."""
    if isinstance(specs, Mapping):
        items = list(specs.values())
        for key, spec in specs.items():
            if key != spec.name:
                raise FormatError(f"The call spec registered as '{key}' is named '{spec.name}'.")
    else:
        items = list(specs)
    out: dict[str, CallSpec] = {}
    for spec in sorted(items, key=lambda s: s.name):
        if not _CALL_NAME_RE.fullmatch(spec.name):
            raise FormatError(
                f"'{spec.name}' cannot be a call name; use letters, digits, '_', '-' or '.', "
                "starting with a letter or '_'."
            )
        if spec.name in out:
            raise FormatError(f"The call '{spec.name}' was given twice.")
        out[spec.name] = spec
    return out


def get_format(name: str, specs: Mapping[str, CallSpec] | Iterable[CallSpec] = ()) -> CallFormat:
    """The call format called ``name`` over these callable specs."""
    cls = _FORMATS.get(name)
    if cls is None:
        raise FormatError(
            f"'{name}' is not a call format; the formats are: {', '.join(FORMAT_NAMES)}."
        )
    return cls(specs=spec_map(specs))


__all__ = [
    "FORMAT_NAMES",
    "BracketFormat",
    "CallEvent",
    "CallFormat",
    "CallSpec",
    "NativeFormat",
    "NoticeEvent",
    "ParseEvent",
    "StreamParser",
    "TextEvent",
    "ValueFrame",
    "XmlFormat",
    "coalesce",
    "get_format",
    "grammar_for",
    "openai_tools",
    "output_call_name",
    "send_call_name",
    "spec_map",
    "validate_call",
    "value_frame",
]
