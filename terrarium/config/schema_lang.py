"""The channel message schema language: a small YAML form compiled to pydantic models.

A message type is a mapping of fields; each field has a ``type`` (``str``, ``int``,
``float``, ``bool``, ``list[T]``, ``enum`` with ``values``, ``object`` with ``fields``),
``required`` (default true unless a ``default`` is given), an optional ``default``, a
``description`` and an ``example`` (shown in the prompt's call examples instead of a
placeholder such as ``...``, which a small model tends to copy). A channel may instead name
a pydantic model by dotted Python path (``package.module:Model`` or ``package.module.Model``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from terrarium.config.located import did_you_mean
from terrarium.config.yamlio import KeyPath, YamlDoc
from terrarium.errors import ConfigError

SCALARS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}
TYPE_WORDS = (*SCALARS, "list[T]", "enum", "object")
_LIST = re.compile(r"^list\[(.+)\]$")
_FIELD_KEYS = (
    "type", "description", "required", "default", "values", "fields", "items", "multiline",
    "example",
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """A compiled field, kept for the prompt's channel topology and the TUI composer."""

    name: str
    type_label: str
    required: bool
    description: str
    default: Any
    example: Any = None  # shown in the prompt's call examples instead of a placeholder


@dataclass(frozen=True, slots=True)
class MessageType:
    """A named message type: its pydantic model and a readable field list."""

    name: str
    description: str
    model: type[BaseModel]
    fields: tuple[FieldInfo, ...]
    source: str


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Compiler:
    def __init__(self, doc: YamlDoc, errors: list[ConfigError]) -> None:
        self.doc = doc
        self.errors = errors

    def fail(self, kp: KeyPath, msg: str, suggestion: str | None = None) -> None:
        self.errors.append(self.doc.error(kp, msg, suggestion))

    def compile_fields(
        self, spec: Any, kp: KeyPath, model_name: str
    ) -> tuple[type[BaseModel], tuple[FieldInfo, ...]] | None:
        if not isinstance(spec, dict) or not spec:
            self.fail(kp, "`fields` must be a non-empty mapping of field name to field spec")
            return None
        defs: dict[str, Any] = {}
        infos: list[FieldInfo] = []
        for fname in spec:  # declaration order: grammars and examples follow it
            fkp = (*kp, fname)
            if not isinstance(fname, str) or not _NAME.match(fname):
                self.fail(fkp, f"field name {fname!r} is not a valid identifier")
                continue
            compiled = self.compile_field(spec[fname], fkp, f"{model_name}_{fname}")
            if compiled is None:
                continue
            ann, label, required, default, desc = compiled
            field_default = ... if required else default
            raw = spec[fname]
            extra = {"multiline": True} if isinstance(raw, dict) and raw.get("multiline") else None
            if isinstance(raw, dict) and raw.get("default") is not None:
                try:  # a default is checked like an example: it is what the model will see
                    TypeAdapter(ann).validate_python(raw["default"])
                except ValidationError:
                    self.fail((*fkp, "default"), f"the default {raw['default']!r} is not a "
                              f"valid {label}", self.doc.yaml11_note(
                                  (*fkp, "default"), raw["default"])
                              or "give a default value of the field's type")
                    continue
            example = raw.get("example") if isinstance(raw, dict) else None
            if example is not None:
                try:
                    TypeAdapter(ann).validate_python(example)
                except ValidationError:
                    self.fail((*fkp, "example"), f"the example {example!r} is not a valid "
                              f"{label}", self.doc.yaml11_note((*fkp, "example"), example)
                              or "give an example value of the field's type")
                    continue
            defs[fname] = (ann, Field(field_default, description=desc or None,
                                      examples=[example] if example is not None else None,
                                      json_schema_extra=extra))
            infos.append(FieldInfo(fname, label, required, desc, None if required else default,
                                   example))
        if len(defs) != len(spec):
            return None
        model = create_model(model_name, __base__=_Strict, **defs)
        return model, tuple(infos)

    def compile_type(self, spec: dict[str, Any], kp: KeyPath, name: str) -> tuple[Any, str] | None:
        tname = spec.get("type")
        if not isinstance(tname, str):
            self.fail((*kp, "type"), "every field needs a `type`",
                      f"one of: {', '.join(TYPE_WORDS)}")
            return None
        tname = tname.strip()
        if tname in SCALARS:
            return SCALARS[tname], tname
        if tname == "enum":
            values = spec.get("values")
            if isinstance(values, list) and values:
                for i, v in enumerate(values):  # `[yes, no]`: YAML 1.1 read booleans
                    if (note := self.doc.yaml11_note((*kp, "values", i), v)) is not None:
                        self.fail((*kp, "values", i), f"enum value {v!r} is not a string",
                                  note)
                        return None
            if not isinstance(values, list) or not values or not all(
                isinstance(v, str) for v in values
            ):
                where = (*kp, "values") if "values" in spec else (*kp, "type")
                self.fail(where, "an enum needs `values`: a non-empty list of strings")
                return None
            return Literal[tuple(values)], "enum[" + "|".join(values) + "]"
        if tname == "object":
            res = self.compile_fields(spec.get("fields"), (*kp, "fields"), name)
            if res is None:
                return None
            model, infos = res
            inner = ", ".join(f"{i.name}: {i.type_label}" for i in infos)
            return model, "object{" + inner + "}"
        if tname == "list":
            items = spec.get("items")
            if not isinstance(items, dict):
                self.fail((*kp, "items"),
                          "`type: list` needs `items`: a field spec for the elements")
                return None
            inner_t = self.compile_type(items, (*kp, "items"), name + "_item")
            if inner_t is None:
                return None
            return list[inner_t[0]], f"list[{inner_t[1]}]"  # type: ignore[valid-type]
        m = _LIST.match(tname)
        if m:
            inner = m.group(1).strip()
            if inner in SCALARS:
                return list[SCALARS[inner]], f"list[{inner}]"  # type: ignore[valid-type]
            self.fail(
                (*kp, "type"),
                f"unknown list element type {inner!r}",
                "use list[str|int|float|bool], or `type: list` with an `items` spec",
            )
            return None
        self.fail((*kp, "type"), f"unknown field type {tname!r}",
                  did_you_mean(tname, list(TYPE_WORDS)) or f"one of: {', '.join(TYPE_WORDS)}")
        return None

    def compile_field(
        self, spec: Any, kp: KeyPath, name: str
    ) -> tuple[Any, str, bool, Any, str] | None:
        if isinstance(spec, str):  # shorthand: `text: str`
            spec = {"type": spec}
        if isinstance(spec, dict) and not isinstance(spec.get("multiline", False), bool):
            self.fail((*kp, "multiline"), "`multiline` must be true or false")
            return None
        if not isinstance(spec, dict):
            self.fail(kp, "a field spec must be a type name or a mapping with `type`")
            return None
        bad = [k for k in spec if k not in _FIELD_KEYS]
        for k in bad:
            self.fail((*kp, k), f"unknown key {k!r} in a field spec",
                      did_you_mean(str(k), _FIELD_KEYS)
                      or f"allowed keys: {', '.join(_FIELD_KEYS)}")
        if bad:
            return None
        typed = self.compile_type(spec, kp, name)
        if typed is None:
            return None
        ann, label = typed
        desc = spec.get("description", "")
        if not isinstance(desc, str):
            self.fail((*kp, "description"), "`description` must be a string")
            return None
        has_default = "default" in spec
        required = spec.get("required", not has_default)
        if not isinstance(required, bool):
            self.fail((*kp, "required"), "`required` must be true or false")
            return None
        default = spec.get("default")
        if not required:
            ann = ann | None
        return ann, label, required, default, desc


def compile_message_type(doc: YamlDoc, data: dict[str, Any], kp: KeyPath,
                         name: str, errors: list[ConfigError]) -> MessageType | None:
    """Compile a ``{name?, description?, fields}`` mapping found at ``kp`` in ``doc``."""
    allowed = ("name", "description", "fields")
    for k in data:
        if k not in allowed:
            errors.append(doc.error((*kp, k), f"unknown key {k!r} in a message schema",
                                    did_you_mean(str(k), allowed)
                                    or f"allowed keys: {', '.join(allowed)}"))
            return None
    comp = _Compiler(doc, errors)
    model_name = "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", name) if p) or "Msg"
    res = comp.compile_fields(data.get("fields"), (*kp, "fields"), model_name)
    if res is None:
        return None
    model, infos = res
    desc = data.get("description", "")
    return MessageType(name, str(desc), model, infos, str(doc.path))


def import_model(ref: str) -> type[BaseModel]:
    """Import a pydantic model named ``pkg.mod:Model`` or ``pkg.mod.Model``."""
    modname, _, attr = ref.partition(":") if ":" in ref else ref.rpartition(".")
    if not modname or not attr:
        raise ValueError(f"{ref!r} is not a dotted path like package.module:Model")
    if not all(part.isidentifier() for part in modname.split(".")):
        raise ValueError(f"{ref!r} is neither a schema name (a file in channels/, e.g. `tip` "
                         "for channels/tip.yaml) nor a dotted path like package.module:Model")
    try:
        module = importlib.import_module(modname)
    except ImportError as exc:
        raise ValueError(f"cannot import module {modname!r}: {exc}") from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise ValueError(f"module {modname!r} has no attribute {attr!r}")
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise ValueError(f"{ref!r} is not a pydantic model class")
    return obj


def message_type_from_model(ref: str, model: type[BaseModel]) -> MessageType:
    """Describe a Python pydantic model as a MessageType."""
    infos = []
    for fname, f in sorted(model.model_fields.items()):
        ann = f.annotation
        label = ann.__name__ if isinstance(ann, type) and not issubclass(ann, Enum) else str(ann)
        label = label.replace("typing.", "")
        default = None if f.is_required() else f.default
        example = f.examples[0] if f.examples else None
        infos.append(FieldInfo(fname, label, f.is_required(), f.description or "", default,
                               example))
    return MessageType(ref, (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else "",
                       model, tuple(infos), ref)


__all__ = [
    "SCALARS",
    "TYPE_WORDS",
    "FieldInfo",
    "MessageType",
    "compile_message_type",
    "import_model",
    "message_type_from_model",
]
