"""Turn pydantic validation errors into located, suggestive ``ConfigError``s."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from terrarium.config.yamlio import KeyPath, YamlDoc
from terrarium.errors import ConfigError, did_you_mean


def _unwrap(ann: Any) -> list[Any]:
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(ann) for t in _unwrap(a)]
    return [ann]


def keys_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys a model accepts at ``loc`` (aliases where set), for suggestions."""
    candidates: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for c in candidates:
            for t in _unwrap(c):
                origin = typing.get_origin(t)
                if isinstance(t, type) and issubclass(t, BaseModel) and isinstance(part, str):
                    for fname, f in t.model_fields.items():
                        if part in (fname, f.alias):
                            nxt.append(f.annotation)
                elif origin in (list, tuple) and isinstance(part, int):
                    nxt.extend(typing.get_args(t)[:1])
                elif origin is dict and isinstance(part, str):
                    nxt.extend(typing.get_args(t)[1:2])
        candidates = nxt
    keys: list[str] = []
    for c in candidates:
        for t in _unwrap(c):
            if isinstance(t, type) and issubclass(t, BaseModel):
                keys.extend(f.alias or n for n, f in t.model_fields.items())
    return sorted(set(keys))


def _data_path(data: Any, loc: Sequence[str | int]) -> KeyPath:
    """Keep the loc parts that exist in the data (drops pydantic's union tags)."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
            out.append(part)
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
            out.append(part)
        elif isinstance(cur, dict) and isinstance(part, str) and part not in cur:
            out.append(part)  # a missing key: point at its parent, name the key
            break
    return tuple(out)


def _sentence(err: dict[str, Any], key: str) -> str:
    kind = err["type"]
    given = err.get("input")
    if kind == "missing":
        return f"missing required key {key!r}"
    if kind == "extra_forbidden":
        return f"unknown key {key!r}"
    shown = repr(given)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    msg = err["msg"]
    msg = msg[0].lower() + msg[1:] if msg else msg
    return f"{msg}, got {shown}"


def from_validation_error(
    doc: YamlDoc,
    exc: ValidationError,
    model: type[BaseModel],
    data: Any,
    base: KeyPath = (),
) -> list[ConfigError]:
    """One ConfigError per pydantic error, deduplicated, located in ``doc``."""
    out: list[ConfigError] = []
    seen: set[tuple[KeyPath, str]] = set()
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _data_path(data, loc)
        key = str(loc[-1]) if loc else ""
        sentence = _sentence(err, key)
        suggestion = None
        if err["type"] == "extra_forbidden":
            allowed = keys_at(model, path[:-1])
            suggestion = did_you_mean(key, allowed) or (
                f"allowed keys here: {', '.join(allowed)}" if allowed else None
            )
        elif err["type"] == "missing":
            suggestion = f"add `{key}:` here"
        elif err["type"] == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            if isinstance(err.get("input"), str):
                opts = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",")]
                suggestion = did_you_mean(err["input"], opts) or f"expected {expected}"
        full = (*base, *path)
        if (full, sentence) in seen:
            continue
        seen.add((full, sentence))
        out.append(doc.error(full, sentence, suggestion))
    return out


def unknown_hint(key: str) -> tuple[str, str] | None:
    """(sentence, suggestion) when ``key`` is not a framework hint key, else None."""
    from terrarium.config.models import HINT_KEYS

    if key in HINT_KEYS:
        return None
    return (f"unknown framework hint {key!r}",
            did_you_mean(key, HINT_KEYS) or f"known hints: {', '.join(HINT_KEYS)}")


__all__ = [
    "from_validation_error",
    "keys_at",
    "unknown_hint",
]
