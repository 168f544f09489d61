"""The configuration reference (docs/reference.md), generated from the schemas themselves.

``python -m terrarium.config.reference --write docs/reference.md`` refreshes the section
between the markers; a test fails when the page and the schemas disagree.
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from terrarium.config.models import (
    ChannelSchemaFile,
    CreatureConfig,
    KohakuPackage,
    TerrariumFile,
)

START = "<!-- config-reference:start -->"
END = "<!-- config-reference:end -->"


def _type_label(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        parts = [_type_label(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" (optional)" if type(None) in args else "")
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (list, tuple):
        return f"list of {_type_label(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_type_label(args[1])}" if len(args) == 2 else "mapping"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "mapping"
    if ann is Any:
        return "any"
    return getattr(ann, "__name__", str(ann))


def _nested(ann: Any) -> list[type[BaseModel]]:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for a in typing.get_args(ann) for m in _nested(a)]


def _table(model: type[BaseModel], prefix: str, rows: list[str]) -> None:
    for name, f in model.model_fields.items():
        key = f"{prefix}{f.alias or name}"
        default = "required" if f.is_required() else (
            "—" if f.default in (None, PydanticUndefined) else f"`{f.default!r}`"
        )
        if f.default_factory is not None:
            default = "empty"
        desc = (f.description or "").replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_label(f.annotation)} | {default} | {desc} |")
        for sub in _nested(f.annotation):
            origin = typing.get_origin(f.annotation)
            is_map = origin is dict or any(typing.get_origin(a) is dict
                                           for a in typing.get_args(f.annotation))
            is_list = origin is list
            _table(sub, f"{key}.NAME." if is_map else f"{key}[]." if is_list else f"{key}.", rows)


def render_reference() -> str:
    parts: list[str] = []
    for title, model in (
        ("Creature `config.yaml`", CreatureConfig),
        ("`terrarium.yaml`", TerrariumFile),
        ("Channel schema `channels/NAME.yaml`", ChannelSchemaFile),
        ("Package `kohaku.yaml`", KohakuPackage),
    ):
        rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
        _table(model, "", rows)
        parts.append(f"### {title}\n\n" + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def splice(readme: str) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{render_reference()}{END}{tail}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        p = Path(sys.argv[2])
        p.write_text(splice(p.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(render_reference())


__all__ = [
    "END",
    "START",
    "render_reference",
    "splice",
]
