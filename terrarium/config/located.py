"""Turn pydantic validation errors into located, suggestive ``ConfigError``s."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from terrarium.config.yamlio import KeyPath, YamlDoc
from terrarium.errors import ConfigError, closest_name, did_you_mean


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
    """One ConfigError per pydantic error, deduplicated, located in ``doc``.

    One mistake gives one error: an unknown key that is a likely typo of a required key
    missing beside it is reported once, as that typo, without "missing required key".
    A value YAML 1.1 read as a boolean or a number where text was expected says so."""
    out: list[ConfigError] = []
    seen: set[tuple[KeyPath, str]] = set()
    errs = exc.errors()
    typos = _typos_of_required(errs)
    for err in errs:
        loc = tuple(err["loc"])
        path = _data_path(data, loc)
        key = str(loc[-1]) if loc else ""
        if err["type"] == "missing" and loc in typos.values():
            continue  # reported at the misspelled key
        if _other_branch_fits(err, errs, data):
            continue  # a mapping where a union also takes text: the mapping branch says why
        sentence = _sentence(err, key)
        suggestion = None
        if loc in typos:
            wanted = str(typos[loc][-1])
            sentence = f"unknown key {key!r}, likely a typo of the required key {wanted!r}"
            suggestion = f"did you mean {wanted!r}? rename it to `{wanted}:`"
        elif err["type"] in _TEXT_EXPECTED and (
                note := doc.yaml11_note((*base, *path), err.get("input"))) is not None:
            suggestion = note
        elif err["type"] == "extra_forbidden":
            allowed = keys_at(model, path[:-1])
            suggestion = did_you_mean(key, allowed) or (
                "this is a terrarium file (it starts with `terrarium:`), not a creature's "
                "config; point `config` at a creature folder holding config.yaml"
                if key == "terrarium" and len(path) == 1 else None) or (
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


_TEXT_EXPECTED = ("string_type", "literal_error", "enum")  # pydantic wanted text here


def _other_branch_fits(err: Any, errs: list[Any], data: Any) -> bool:
    """Whether ``err`` is a union branch that wanted a plain value (``str`` in ``str |
    SubagentConfig``) where a mapping was written, and another branch of the same union has
    its own errors: the mapping was meant for that branch, so only its errors are the
    mistake (``subagents: {h: {confg: ...}}`` is one typo, not also "not a string")."""
    loc = tuple(err["loc"])
    given = err.get("input")
    if not isinstance(given, dict) or not err["type"].endswith("_type") or not loc:
        return False
    union = loc[:-1]
    node = data
    for part in union:  # the value the union was given, found by the loc's real keys
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    if node is not given or str(loc[-1]) in given:
        return False  # the last part is a real key, not a branch tag

    def other_branch(e: Any) -> bool:
        el = tuple(e["loc"])
        return (e is not err and el[:len(union)] == union and len(el) > len(union)
                and el[len(union)] != loc[-1] and str(el[len(union)]) not in given)

    return any(other_branch(e) for e in errs)


def _typos_of_required(errs: list[Any]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Unknown key loc → the loc of the missing required key beside it that it most
    likely misspells (each missing key claimed by its closest unknown key only)."""
    missing = [tuple(e["loc"]) for e in errs if e["type"] == "missing" and e["loc"]]
    extra = [tuple(e["loc"]) for e in errs if e["type"] == "extra_forbidden" and e["loc"]]
    out: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for m in missing:
        beside = {str(x[-1]): x for x in extra if x[:-1] == m[:-1] and x not in out}
        if (close := closest_name(str(m[-1]), beside)) is not None:
            out[beside[close]] = m
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
