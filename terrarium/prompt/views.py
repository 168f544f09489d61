"""Sorted, validated views of the input collections, and the identity-keyed memos for them.

Inputs are frozen tuples of frozen dataclasses, so the sorted view of a given tuple never
changes; a creature restart (or a second creature sharing a skill set) reuses it instead of
re-sorting and re-validating 200 skills. The memo classes live here; their instances live in
a ``PromptCache`` (no module-level state). Entries hold a reference to their key object, so
an id() can never be confused with a recycled one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from operator import attrgetter
from typing import Any, Generic, TypeVar

from terrarium.formats.base import CallFormat
from terrarium.prompt.inputs import PromptPlugin, Skill
from terrarium.prompt.ownership import OwnerTable
from terrarium.tools.base import Tool

__all__ = [
    "IdentityCache",
    "IdentityMemo",
    "plugin_owner",
    "sort_plugins",
    "sort_skills",
    "sort_tools",
    "tool_owner",
    "unique_sorted",
]

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


def sort_skills(skills: tuple[Skill, ...]) -> tuple[tuple[Skill, ...], dict[str, Skill]]:
    """Skills by name, and a name → skill map; two skills with one name are refused."""
    reg: OwnerTable[Skill] = OwnerTable("skill")
    reg.register_many((s.name, s, s.source) for s in skills)
    return tuple(sorted(skills, key=_BY_NAME)), reg.as_dict()


def sort_tools(tools: tuple[type[Tool], ...]) -> tuple[tuple[type[Tool], ...], frozenset[str]]:
    """Tools by name, and their call names; two tools with one name are refused."""
    reg: OwnerTable[str] = OwnerTable("call name")
    reg.register_many((t.name, "tool", tool_owner(t)) for t in tools)
    return tuple(sorted(tools, key=_BY_NAME)), frozenset(reg.as_dict())


def unique_sorted(kind: str, owner: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A sorted view that refuses two entries with one name (one owner per fact)."""

    def compute(items: tuple[Any, ...]) -> tuple[Any, ...]:
        reg: OwnerTable[Any] = OwnerTable(kind)
        reg.register_many((x.name, x, owner) for x in items)
        return tuple(sorted(items, key=_BY_NAME))

    return compute


def plugin_owner(plugin: object) -> str:
    cls = plugin if isinstance(plugin, type) else type(plugin)
    return f"plugin {cls.__module__}.{cls.__qualname__}"


def _plugin_key(p: Any) -> tuple[int, str]:
    return (p.priority, p.name)


def sort_plugins(plugins: tuple[PromptPlugin, ...]) -> tuple[PromptPlugin, ...]:
    """Plugins by priority, then name; two plugins with one name are refused."""
    reg: OwnerTable[Any] = OwnerTable("prompt plugin")
    reg.register_many((p.name, p, plugin_owner(p)) for p in plugins)
    return tuple(sorted(plugins, key=_plugin_key))


def tool_owner(tool: type[Tool]) -> str:
    return f"tool class {tool.__module__}.{tool.__qualname__}"
