"""The events' JSON form, as the durable log stores it: ``event_to_dict`` gives it and
``event_from_dict`` rebuilds the typed event (``EVENT_TYPES`` maps each ``kind`` to its
class), so a recorded run replays as the same typed events."""

from __future__ import annotations

import dataclasses
import json
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from terrarium.events import core, speech, startup
from terrarium.events.core import Event


def _event_types() -> dict[str, type[Event]]:
    """Every event class of the event modules by its ``kind``; two classes may not share
    one."""
    found: dict[str, type[Event]] = {}
    classes = [obj for module in (core, speech, startup) for obj in vars(module).values()
               if isinstance(obj, type) and obj.__module__ == module.__name__]
    for obj in classes:
        if issubclass(obj, Event) and obj is not Event:
            if obj.kind in found:
                raise TypeError(f"{obj.__name__} and {found[obj.kind].__name__} share the "
                                f"event kind {obj.kind!r}")
            found[obj.kind] = obj
    return found


EVENT_TYPES: Mapping[str, type[Event]] = types.MappingProxyType(_event_types())


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready form with the ``kind`` included (for the log's events table)."""
    data = dataclasses.asdict(event)
    data["kind"] = event.kind
    return data


def _nested(o: Any) -> Any:
    """What JSON cannot hold as is: a nested dataclass (a transcript entry, speech
    figures, prompt sections) as its fields; anything else as its text."""
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
    return str(o)


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_nested).encode
# per event class: a function giving its JSON-ready dict with ``kind`` and ``seq``
# (``_encoder_of``)
_ENCODERS: dict[type, Callable[[Any, int | None], dict[str, Any]]] = {}
_AS_DICT: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _as_dict_of(cls: type) -> Callable[[Any], dict[str, Any]]:
    """A function giving a dataclass instance's fields as a dict, in field order (what
    orjson writes for it). Written out per class, as ``dataclasses`` writes ``__init__``:
    a dict display of attribute reads, a fifth of orjson's own way with a slotted
    dataclass (it asks for ``__dict__`` first, and the AttributeError alone costs more)."""
    names = [f.name for f in dataclasses.fields(cls)]
    if not all(n.isidentifier() for n in names):  # (never for a dataclass's own fields)
        return lambda o: {n: getattr(o, n) for n in names}
    ns: dict[str, Any] = {}
    exec("def as_dict(o):\n    return {" + ", ".join(f"{n!r}: o.{n}" for n in names)
         + "}", ns)
    fn: Callable[[Any], dict[str, Any]] = ns["as_dict"]
    return fn


def _plain(value: Any) -> Any:
    """A dataclass instance as its fields (anything else as it is), for orjson."""
    fn = _AS_DICT.get(type(value))
    if fn is None:
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            return value
        fn = _AS_DICT[type(value)] = _as_dict_of(type(value))
    return fn(value)


def _nested_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of event class ``cls`` typed as a dataclass (False) or a tuple of them
    (True), optional or not: ``event_json`` hands them to orjson as dicts."""
    hints = typing.get_type_hints(cls)
    out: list[tuple[str, bool]] = []
    for f in dataclasses.fields(cls):
        tp = hints.get(f.name)
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            inner = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = inner[0] if len(inner) == 1 else None
        if dataclasses.is_dataclass(tp):
            out.append((f.name, False))
        elif typing.get_origin(tp) is tuple and any(
                dataclasses.is_dataclass(a) for a in typing.get_args(tp)):
            out.append((f.name, True))
    return tuple(out)
# orjson writes what ``_dumps`` writes (compact, UTF-8 as is, a nested dataclass as its
# fields, int keys as text) in a fifth of the time; a datetime goes to ``_nested`` (its
# text, as ``_dumps`` gives it). What orjson refuses (an int past 64 bits) takes ``_dumps``.
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def _one(value: Any) -> Any:
    """A field typed as a dataclass (or None), as orjson is handed it."""
    return value if value is None else _plain(value)


def _many(value: Any) -> Any:
    """A field typed as a tuple of dataclasses, as orjson is handed it."""
    if type(value) is tuple:
        return [_plain(v) for v in value]
    return value if value is None else _plain(value)


def _encoder_of(cls: type) -> Callable[[Any, int | None], dict[str, Any]]:
    """``encode(event, seq)``: the event's fields in order (a nested dataclass as its
    fields: ``_nested_fields``), then ``kind`` and ``seq``, as one dict display written
    out for ``cls`` (as ``_as_dict_of``): each event was a dict built from a zip, a loop
    and two stores, twice orjson's own cost."""
    names = [f.name for f in dataclasses.fields(cls)]
    nested = dict(_nested_fields(cls))
    if "kind" in names or "seq" in names or not all(n.isidentifier() for n in names):
        getter = operator.attrgetter(*names) if names else (lambda e: ())

        def generic(e: Any, seq: int | None) -> dict[str, Any]:  # (no event is like this)
            values = getter(e) if len(names) > 1 else (getter(e),) if names else ()
            data = dict(zip(names, values, strict=True))
            for n, many in nested.items():
                data[n] = (_many if many else _one)(data[n])
            data["kind"] = e.kind
            data["seq"] = seq
            return data

        return generic
    items = [f"{n!r}: _many(e.{n})" if nested.get(n) else f"{n!r}: _one(e.{n})"
             if n in nested else f"{n!r}: e.{n}" for n in names]
    ns: dict[str, Any] = {"_one": _one, "_many": _many}
    exec("def encode(e, seq):\n    return {" + ", ".join([*items, "'kind': e.kind",
                                                         "'seq': seq"]) + "}", ns)
    fn: Callable[[Any, int | None], dict[str, Any]] = ns["encode"]
    return fn


def event_json(event: Event, seq: int | None = None, without: str | None = None) -> str:
    """``event_to_dict(event)`` as JSON (plus ``seq`` when given), without its deep copy:
    the same keys in the same order, encoded straight from the event's fields. Every event
    of every run is written through this (the log's events table, the server's stream):
    it was the largest single cost of ``terrarium serve``'s profile, hence orjson.
    ``without``: a field left out (a log row whose value another row holds)."""
    encode = _ENCODERS.get(type(event))
    if encode is None:
        encode = _ENCODERS[type(event)] = _encoder_of(type(event))
    data = encode(event, seq)
    if seq is None:
        del data["seq"]
    if without is not None:
        data.pop(without, None)
    try:  # (``json_text``, inline: every event of every run comes here)
        return orjson.dumps(data, default=_nested, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return _dumps(data)


def json_text(data: Mapping[str, Any]) -> str:
    """``data`` as ``event_json`` encodes an event's fields (compact, UTF-8 as is)."""
    try:
        return orjson.dumps(data, default=_nested, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return _dumps(data)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its ``event_to_dict`` form (lists back to tuples, nested
    dataclasses rebuilt). Unknown keys are ignored; an unknown ``kind`` or a missing
    field raises ``ValueError``."""
    cls = EVENT_TYPES.get(str(data.get("kind")))
    if cls is None:
        raise ValueError(f"unknown event kind {data.get('kind')!r}")
    try:
        return _builder(cls)(data)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a {data.get('kind')!r} event could not be rebuilt: {exc}") from exc


_Convert = Callable[[Any], Any]
_BUILDERS: dict[type, Callable[[Mapping[str, Any]], Any]] = {}


def _builder(cls: type) -> Callable[[Mapping[str, Any]], Any]:
    """A function rebuilding ``cls`` from a mapping; worked out once per class."""
    build = _BUILDERS.get(cls)
    if build is None:
        hints = typing.get_type_hints(cls)
        convert = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls) if f.init}

        def build(data: Mapping[str, Any]) -> Any:
            return cls(**{k: conv(data[k]) for k, conv in convert.items() if k in data})

        _BUILDERS[cls] = build
    return build


def _converter(tp: Any) -> _Convert:
    """How to turn a JSON value back into a field of type ``tp``."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return lambda v: _builder(tp)(v)  # type: ignore[arg-type]
    if origin is tuple:
        args = typing.get_args(tp)
        item = _converter(args[0]) if args else (lambda v: v)
        return lambda v: tuple(item(x) for x in v)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) == 1:
            conv = _converter(inner[0])
            return lambda v: None if v is None else conv(v)
    return lambda v: v


__all__ = ["EVENT_TYPES", "event_from_dict", "event_json", "event_to_dict", "json_text"]
