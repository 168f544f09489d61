"""Sorted, validated views of the input collections, cached by the identity of the input.

Inputs are frozen tuples of frozen dataclasses, so the sorted view of a given tuple never
changes; a creature restart (or a second creature sharing a skill set) reuses it instead of
re-sorting and re-validating 200 skills. Entries hold a reference to their key object, so an
id() can never be confused with a recycled one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import wraps
from operator import attrgetter
from typing import Any, Generic, TypeVar

from terrarium.formats.base import CallFormat
from terrarium.prompt.inputs import ChannelView, NamedOutputView, PromptPlugin, Skill, TeamMember
from terrarium.prompt.owners import Registry
from terrarium.tools.base import Tool

K = TypeVar("K")
V = TypeVar("V")
_BY_NAME = attrgetter("name")


class IdentityCache(Generic[K, V]):
    """``compute(obj)`` memoized on ``id(obj)``, holding ``obj`` alive; bounded."""

    def __init__(self, compute: Callable[[K], V], maxsize: int = 256) -> None:
        self._compute = compute
        self._max = maxsize
        self._entries: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self._compute(obj)  # raises (uncached) on invalid input
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[id(obj)] = (obj, value)
        return value

    def clear(self) -> None:
        self._entries.clear()


class IdentityMemo:
    """``fn(*args)`` memoized on the identity of its tuple arguments and the value of the rest.

    The aggregator's inputs are frozen tuples, so a result computed from the same tuple
    objects is still right; comparing identities costs nothing, while hashing 40 tool classes
    or 12 channel views by value on every assembly is what made the prefix slow. A call format
    stands for its class: rendering a call depends only on the format's class. Entries keep
    their tuples alive, so an id() is never confused with a recycled one; bounded.
    """

    def __init__(self, fn: Callable[..., V], maxsize: int = 512) -> None:
        self._fn = fn
        self._max = maxsize
        self._entries: dict[tuple[Hashable, ...], tuple[tuple[Any, ...], V]] = {}
        _MEMOS.append(self)

    def __call__(self, *args: Any) -> V:
        key = tuple(_key_part(a) for a in args)
        try:
            hit = self._entries.get(key)
        except TypeError:  # an unhashable (mutable) argument: never memoized
            return self._fn(*args)
        if hit is not None and all(
            a is b for a, b in zip(hit[0], args, strict=True) if type(a) is tuple
        ):
            return hit[1]
        value = self._fn(*args)  # raises (uncached) on invalid input
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[key] = (args, value)
        return value

    def clear(self) -> None:
        self._entries.clear()


def _key_part(a: Any) -> Hashable:
    if type(a) is tuple:
        return ("id", id(a))
    if isinstance(a, CallFormat):
        return ("fmt", type(a))
    return a


_MEMOS: list[IdentityMemo] = []


def identity_memo(fn: Callable[..., V]) -> Callable[..., V]:
    """Decorator form of :class:`IdentityMemo`, keeping the function's name and docs."""
    memo = IdentityMemo(fn)
    return wraps(fn)(memo)


def _skills_view(skills: tuple[Skill, ...]) -> tuple[tuple[Skill, ...], dict[str, Skill]]:
    reg: Registry[Skill] = Registry("skill")
    reg.register_many((s.name, s, s.source) for s in skills)
    return tuple(sorted(skills, key=_BY_NAME)), reg.as_dict()


def _tools_view(tools: tuple[type[Tool], ...]) -> tuple[tuple[type[Tool], ...], frozenset[str]]:
    reg: Registry[str] = Registry("call name")
    reg.register_many((t.name, "tool", tool_owner(t)) for t in tools)
    return tuple(sorted(tools, key=_BY_NAME)), frozenset(reg.as_dict())


def _sorted_view(items: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(sorted(items, key=_BY_NAME))


def _unique_sorted(kind: str, owner: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A sorted view that refuses two entries with one name (one owner per fact)."""

    def compute(items: tuple[Any, ...]) -> tuple[Any, ...]:
        reg: Registry[Any] = Registry(kind)
        reg.register_many((x.name, x, owner) for x in items)
        return tuple(sorted(items, key=_BY_NAME))

    return compute


def plugin_owner(plugin: object) -> str:
    cls = plugin if isinstance(plugin, type) else type(plugin)
    return f"plugin {cls.__module__}.{cls.__qualname__}"


def _plugin_key(p: Any) -> tuple[int, str]:
    return (p.priority, p.name)


def _plugins_view(plugins: tuple[PromptPlugin, ...]) -> tuple[PromptPlugin, ...]:
    reg: Registry[Any] = Registry("prompt plugin")
    reg.register_many((p.name, p, plugin_owner(p)) for p in plugins)
    return tuple(sorted(plugins, key=_plugin_key))


def tool_owner(tool: type[Tool]) -> str:
    return f"tool class {tool.__module__}.{tool.__qualname__}"


skills_view = IdentityCache(_skills_view)
tools_view = IdentityCache(_tools_view)
sorted_view = IdentityCache(_sorted_view)
channels_view: IdentityCache[tuple[ChannelView, ...], tuple[ChannelView, ...]] = IdentityCache(
    _unique_sorted("channel", "terrarium wiring")
)
team_view: IdentityCache[tuple[TeamMember, ...], tuple[TeamMember, ...]] = IdentityCache(
    _unique_sorted("team member", "terrarium wiring")
)
outputs_view: IdentityCache[tuple[NamedOutputView, ...], tuple[NamedOutputView, ...]] = (
    IdentityCache(_unique_sorted("named output", "output.named_outputs"))
)
plugins_view = IdentityCache(_plugins_view)


def clear_view_caches() -> None:
    """For benchmarks and tests that want to measure or exercise the cold path."""
    for cache in (skills_view, tools_view, sorted_view, channels_view, team_view,
                  outputs_view, plugins_view):
        cache.clear()
    for memo in _MEMOS:
        memo.clear()
