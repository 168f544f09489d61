"""An MCP tool's JSON schema as a pydantic args model, so it is one tool like any other.

The call formats, the grammar, the prompt docs and the runner all read a pydantic model, so
the schema becomes one: ``string``/``integer``/``number``/``boolean`` become ``str``/``int``/
``float``/``bool`` (with their bounds, lengths and patterns), ``enum`` and ``const`` become a
``Literal``, ``array`` a ``list`` of its item type, ``object`` a ``dict`` (of its
``additionalProperties`` type when there is one). A property that is not required is
optional with the schema's default, else ``None``. What this mapping cannot say (a nested
object's own properties, ``oneOf`` between shapes, ``$ref``) becomes a JSON-object (or
JSON-value) field whose original schema is kept in the field's JSON schema, so a native-call
model still sees it and the server still validates it.

A property whose name is not a Python identifier (or would shadow a pydantic attribute) gets
a tidied field name; ``wire_names`` maps it back for the call.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

__all__ = ["ArgsSchema", "McpArgs", "args_model_from_schema"]

_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
_RESERVED = frozenset(dir(BaseModel)) | {"model_config"}
_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


class McpArgs(BaseModel):
    """Base of the generated models: ``null`` for an optional argument means "not given".

    Function-calling models often send ``null`` for every optional parameter they do not
    use; where the tool's schema does not allow null, that is dropped before validation
    rather than refused (and the field's JSON schema stays a plain type, not "or null").
    """

    model_config = ConfigDict(extra="forbid")
    null_means_absent: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.null_means_absent:
            return {k: v for k, v in data.items()
                    if not (v is None and k in cls.null_means_absent)}
        return data


@dataclass(frozen=True, slots=True)
class ArgsSchema:
    """The args model of one MCP tool and how its fields go back on the wire."""

    model: type[BaseModel]
    wire_names: dict[str, str]  # field name -> property name the server expects
    nullable: frozenset[str]  # fields whose schema allows null (None is sent, not dropped)

    def to_wire(self, args: BaseModel) -> dict[str, Any]:
        """The arguments the model gave (never defaults it left out), by property name.

        ``None`` for a field the schema does not allow to be null means "not given" (a text
        call may write ``null`` for an optional argument), so it is dropped.
        """
        out: dict[str, Any] = {}
        for fname, value in args.model_dump(mode="json", exclude_unset=True).items():
            if value is None and fname not in self.nullable:
                continue
            out[self.wire_names.get(fname, fname)] = value
        return out


def _field_name(prop: str, taken: set[str]) -> str:
    name = _NOT_IDENT.sub("_", prop).lstrip("_") or "arg"
    if name[0].isdigit() or keyword.iskeyword(name) or name in _RESERVED:
        name = f"arg_{name}"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _literal(values: list[Any]) -> Any | None:
    ok = [v for v in values if isinstance(v, (str, int, float, bool)) or v is None]
    if not ok or len(ok) != len(values):
        return None
    non_null = tuple(v for v in ok if v is not None)
    if not non_null:
        return None
    return Literal[non_null]  # type: ignore[valid-type]


def _types_of(schema: dict[str, Any]) -> tuple[list[str], bool]:
    """The schema's non-null type names and whether null is allowed."""
    raw = schema.get("type")
    types = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list) else []
    nullable = "null" in types
    return [t for t in types if t != "null"], nullable


def _unwrap_nullable(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``anyOf``/``oneOf`` of one shape and ``null`` (pydantic's Optional) as that shape."""
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if isinstance(alts, list) and alts:
            non_null = [a for a in alts if not (isinstance(a, dict) and a.get("type") == "null")]
            if len(non_null) == 1 and len(non_null) < len(alts) and isinstance(non_null[0], dict):
                merged = {k: v for k, v in schema.items() if k != key}
                return {**non_null[0], **merged}, True
    return schema, False


def _annotation(schema: dict[str, Any], depth: int = 0) -> tuple[Any, bool, bool]:
    """(annotation, nullable, exact): ``exact`` False when the schema was only approximated."""
    schema, nullable = _unwrap_nullable(schema)
    if "enum" in schema and isinstance(schema["enum"], list):
        lit = _literal(schema["enum"])
        if lit is not None:
            return lit, nullable or None in schema["enum"], True
    if "const" in schema:
        lit = _literal([schema["const"]])
        if lit is not None:
            return lit, nullable, True
    types, null_type = _types_of(schema)
    nullable = nullable or null_type
    if len(types) != 1:
        return Any, nullable, not types and not _has_shape(schema)
    kind = types[0]
    if kind in _SCALARS:
        return _SCALARS[kind], nullable, True
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items and depth < 4:
            item, item_null, exact = _annotation(items, depth + 1)
            return list[Optional[item] if item_null else item], nullable, exact  # noqa: UP045 (a runtime value)
        return list[Any], nullable, not items
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra and not schema.get("properties") and depth < 4:
            value, value_null, exact = _annotation(extra, depth + 1)
            return dict[str, Optional[value] if value_null else value], nullable, exact  # noqa: UP045 (a runtime value)
        return dict[str, Any], nullable, not schema.get("properties")
    return Any, nullable, False


def _has_shape(schema: dict[str, Any]) -> bool:
    return any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "not", "if"))


def _constraints(schema: dict[str, Any], ann: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ann in (int, float):
        for js, py in (("minimum", "ge"), ("maximum", "le"),
                       ("exclusiveMinimum", "gt"), ("exclusiveMaximum", "lt")):
            value = schema.get(js)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[py] = value
    elif ann is str:
        for js, py in (("minLength", "min_length"), ("maxLength", "max_length")):
            if isinstance(schema.get(js), int):
                out[py] = schema[js]
        if isinstance(schema.get("pattern"), str):
            out["pattern"] = schema["pattern"]
    return out


def _kept_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The parts of an approximated schema a native-call model should still see."""
    keep = ("properties", "required", "items", "anyOf", "oneOf", "allOf", "$ref",
            "additionalProperties", "$defs", "definitions")
    return {k: schema[k] for k in keep if k in schema}


def args_model_from_schema(tool_name: str, schema: dict[str, Any] | None) -> ArgsSchema:
    """The pydantic model (``extra="forbid"``) for an MCP tool's ``inputSchema``."""
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or ())
    fields: dict[str, Any] = {}
    wire: dict[str, str] = {}
    nullable_fields: set[str] = set()
    required_fields: set[str] = set()
    taken: set[str] = set()
    for prop in sorted(props, key=lambda p: (p not in required, list(props).index(p))):
        sub = props[prop] if isinstance(props[prop], dict) else {}
        fname = _field_name(prop, taken)
        taken.add(fname)
        if fname != prop:
            wire[fname] = prop
        ann, nullable, exact = _annotation(sub)
        inner, _ = _unwrap_nullable(sub)
        desc = sub.get("description") or inner.get("description")
        kwargs: dict[str, Any] = {"description": " ".join(str(desc).split()) if desc else None}
        kwargs.update(_constraints(inner, ann))
        if "pattern" in kwargs and not _compiles(kwargs["pattern"]):
            del kwargs["pattern"]  # an ECMA-only regex: the server still checks it
        if nullable:
            nullable_fields.add(fname)
            ann = Optional[ann]  # noqa: UP045 (a runtime value)
        kept = {} if exact else _kept_schema(inner)
        if prop in required:
            required_fields.add(fname)
            default: Any = ...
        else:
            default = sub.get("default", inner.get("default"))
        if kept or (default is None and not nullable):
            kwargs["json_schema_extra"] = _extra(kept, drop_default=default is None)
        fields[fname] = (ann, Field(default, **kwargs))
    model_name = "".join(part.title() for part in _NOT_IDENT.split(tool_name) if part) or "Mcp"
    model = create_model(f"{model_name}Args", __base__=McpArgs, **fields)
    model.null_means_absent = frozenset(
        n for n in fields if n not in nullable_fields and n not in required_fields)
    return ArgsSchema(model, wire, frozenset(nullable_fields))


def _extra(kept: dict[str, Any], *, drop_default: bool) -> Any:
    """The field's JSON schema as a native-call model should see it: the approximated
    schema's own parts kept, and no ``"default": null`` on a field that may not be null
    (leaving it out is how the model says "not given")."""

    def fix(schema: dict[str, Any]) -> None:
        schema.update(kept)
        if drop_default:
            schema.pop("default", None)

    return fix


def _compiles(pattern: str) -> bool:
    try:
        create_model("PatternProbe", value=(str, Field(pattern=pattern)))
    except Exception:
        return False
    return True
