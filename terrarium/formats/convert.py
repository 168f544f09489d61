"""Turn raw call arguments (text from a parser, or JSON from the API) into a validated model.

Text formats deliver every value as a string, so each one is converted by its field's
declared type before pydantic sees it. Conversion is strict where lax coercion would hide a
model's mistake: ``"false"`` must become ``False``, and ``"maybe"`` is refused, not truthy.
"""

from __future__ import annotations

import enum
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError

from terrarium.errors import ConversionError
from terrarium.formats.base import CallEvent, CallSpec

Kind = Literal["str", "bool", "int", "float", "choice", "json", "any"]

TRUE_WORDS = frozenset({"true", "yes", "1"})
FALSE_WORDS = frozenset({"false", "no", "0"})
NULL_WORDS = frozenset({"", "null", "none"})
_INT_RE = re.compile(r"[+-]?\d+")
_FLOAT_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True, slots=True)
class FieldKind:
    """What a field's annotation asks for, reduced to what conversion and grammars need."""

    kind: Kind
    optional: bool = False
    choices: tuple[Any, ...] = ()  # for "choice": the allowed values, in declaration order
    container: str = ""  # for "json": "list" or "object"
    item: FieldKind | None = None  # for a list: its element kind; for a dict: its value kind


def field_kind(annotation: Any) -> FieldKind:
    """Classify a pydantic field annotation (Optional unwrapped; unusual unions become "any")."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(members) < len(typing.get_args(annotation))
        if len(members) != 1:
            return FieldKind("any", optional)
        annotation = members[0]
        origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return field_kind(typing.get_args(annotation)[0])
    if origin is Literal:
        return FieldKind("choice", optional, tuple(typing.get_args(annotation)))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return FieldKind("choice", optional, tuple(m.value for m in annotation))
    if annotation is bool:
        return FieldKind("bool", optional)
    if annotation is int:
        return FieldKind("int", optional)
    if annotation is float:
        return FieldKind("float", optional)
    if annotation is str:
        return FieldKind("str", optional)
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set, frozenset):
        args = typing.get_args(annotation)
        item = field_kind(args[0]) if len(args) == 1 else None
        return FieldKind("json", optional, container="list", item=item)
    if origin is dict or annotation is dict:
        args = typing.get_args(annotation)
        item = field_kind(args[1]) if len(args) == 2 else None
        return FieldKind("json", optional, container="object", item=item)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return FieldKind("json", optional, container="object")
    return FieldKind("any", optional)



def _describe_choices(choices: tuple[Any, ...]) -> str:
    return ", ".join(repr(c) for c in choices)


def convert_value(call: str, arg: str, value: Any, kind: FieldKind) -> Any:
    """Convert one raw value; strings are parsed by kind, other values pass to pydantic."""
    if not isinstance(value, str):
        if kind.kind == "bool" and not isinstance(value, bool) and value is not None:
            raise ConversionError(
                f"Argument '{arg}' of call '{call}' must be true or false, not {value!r}."
            )
        return value
    text = value.strip()
    if kind.optional and kind.kind not in ("str", "any") and text.lower() in NULL_WORDS:
        return None
    if kind.kind == "bool":
        low = text.lower()
        if low in TRUE_WORDS:
            return True
        if low in FALSE_WORDS:
            return False
        raise ConversionError(
            f"Argument '{arg}' of call '{call}' must be true or false "
            f"(yes/no and 1/0 also work), not {value!r}."
        )
    if kind.kind == "int":
        if _INT_RE.fullmatch(text):
            return int(text)
        raise ConversionError(
            f"Argument '{arg}' of call '{call}' must be a whole number, not {value!r}."
        )
    if kind.kind == "float":
        if _FLOAT_RE.fullmatch(text):
            return float(text)
        raise ConversionError(f"Argument '{arg}' of call '{call}' must be a number, not {value!r}.")
    if kind.kind == "choice":
        for choice in kind.choices:
            if text == str(choice.value if isinstance(choice, enum.Enum) else choice):
                return choice
        raise ConversionError(
            f"Argument '{arg}' of call '{call}' must be one of {_describe_choices(kind.choices)}, "
            f"not {value!r}."
        )
    if kind.kind == "json":
        try:
            return json.loads(text, strict=False)  # tolerate raw tabs inside strings
        except json.JSONDecodeError:
            shape = '["a", "b"]' if kind.container == "list" else '{"key": "value"}'
            noun = "list" if kind.container == "list" else "object"
            raise ConversionError(
                f"Argument '{arg}' of call '{call}' must be a JSON {noun} such as {shape}, "
                f"not {value!r}."
            ) from None
    return value


def _pydantic_sentences(call: str, exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_url=False):
        loc = err.get("loc", ())
        arg = str(loc[0]) if loc else "?"
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
        if err.get("type") == "missing" and len(loc) == 1:
            out.append(f"Argument '{arg}' of call '{call}' is required but was not given.")
            continue
        msg = str(err.get("msg", "is invalid")).rstrip(".")
        out.append(
            f"Argument '{arg}{where}' of call '{call}' is invalid: {msg} "
            f"(got {err.get('input')!r})."
        )
    return out


def validate_call(
    spec: CallSpec, raw_args: Mapping[str, Any], *, call_id: str | None = None
) -> CallEvent:
    """Convert and validate ``raw_args`` for ``spec``; failures become ``CallEvent.error``."""
    fields = spec.args_model.model_fields
    problems: list[str] = []
    unknown = [k for k in raw_args if k not in fields]
    if unknown:
        known = ", ".join(sorted(fields)) or "none"
        for key in unknown:
            problems.append(
                f"Call '{spec.name}' has no argument '{key}'; its arguments are: {known}."
            )
    converted: dict[str, Any] = {}
    for key, value in raw_args.items():
        if key not in fields:
            continue
        try:
            converted[key] = convert_value(
                spec.name, key, value, field_kind(fields[key].annotation)
            )
        except ConversionError as exc:
            problems.append(str(exc))
    if not problems:
        try:
            args = spec.args_model.model_validate(converted)
        except ValidationError as exc:
            problems.extend(_pydantic_sentences(spec.name, exc))
        else:
            return CallEvent(spec.name, dict(raw_args), args=args, call_id=call_id)
    return CallEvent(spec.name, dict(raw_args), error=" ".join(problems), call_id=call_id)


def value_to_text(value: Any) -> str:
    """How a typed value is written in a text call, so that conversion reads it back."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (set, frozenset)):
        value = sorted(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def value_to_json(value: Any) -> Any:
    """A JSON-ready form of a typed value (for native calls and their rendering)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return sorted(value_to_json(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [value_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): value_to_json(v) for k, v in value.items()}
    return value


__all__ = [
    "FALSE_WORDS",
    "NULL_WORDS",
    "TRUE_WORDS",
    "FieldKind",
    "Kind",
    "convert_value",
    "field_kind",
    "validate_call",
    "value_to_json",
    "value_to_text",
]
