"""Example call arguments for the prompt, derived from the same schemas the parser checks.

The examples are placeholders of the right type (``"..."`` for text, ``1`` for numbers, the
first member of an enum), so a model copying an example produces a call that validates.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from pydantic import BaseModel

from terrarium.prompt.inputs import FieldView

__all__ = ["fields_example", "model_example", "value_for_label"]

_PLAIN = types.MappingProxyType({"str": "...", "int": 1, "float": 1.0, "bool": True})


def value_for_label(label: str) -> Any:
    """A placeholder for a channel field given its type label (``enum[a|b]`` → ``"a"``)."""
    label = label.strip()
    if label in _PLAIN:
        return _PLAIN[label]
    if label.startswith("enum[") and label.endswith("]"):
        return label[5:-1].split("|", 1)[0]
    if label.startswith("list["):
        return []
    if label.startswith("object") or label.startswith("dict"):
        return {}
    if label.endswith("| None") or label.endswith("|None"):
        return value_for_label(label.rsplit("|", 1)[0])
    return "..."


def fields_example(fields: tuple[FieldView, ...]) -> dict[str, Any]:
    """Example arguments for a channel send: every required field the sender writes, in
    schema order. Fields the runtime fills in are not the model's to write; when they were
    all the required ones, the example shows the optional fields left, never an empty call."""
    written = [f for f in fields if not f.filled]
    shown = [f for f in written if f.required]
    if not shown and len(written) < len(fields):
        shown = written
    return {f.name: f.example if f.example is not None else value_for_label(f.type_label)
            for f in shown}


def _value_for_annotation(ann: Any) -> Any:
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return typing.get_args(ann)[0]
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(ann) if a is not type(None)]
        return _value_for_annotation(inner[0]) if inner else None
    if origin in (list, tuple, set, frozenset):
        return []
    if origin is dict:
        return {}
    if isinstance(ann, type):
        if issubclass(ann, bool):
            return True
        if issubclass(ann, enum.Enum):
            return next(iter(ann)).value
        if issubclass(ann, int):
            return 1
        if issubclass(ann, float):
            return 1.0
        if issubclass(ann, BaseModel):
            return {}
    return "..."


def model_example(model: type[BaseModel]) -> tuple[tuple[str, Any], ...]:
    """Example arguments for a tool: its required fields in declaration order.

    A pure function of the class (a ``PromptCache`` memoizes it per tool)."""
    return tuple(
        (name, _value_for_annotation(f.annotation))
        for name, f in model.model_fields.items()
        if f.is_required()
    )
