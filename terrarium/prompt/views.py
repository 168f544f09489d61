"""Sorted, validated views of the input collections, cached by the identity of the input.

Inputs are frozen tuples of frozen dataclasses, so the sorted view of a given tuple never
changes; a creature restart (or a second creature sharing a skill set) reuses it instead of
re-sorting and re-validating 200 skills. Entries hold a reference to their key object, so an
id() can never be confused with a recycled one.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, TypeVar

from terrarium.prompt.inputs import Skill
from terrarium.prompt.registry import Registry
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


def tool_owner(tool: type[Tool]) -> str:
    return f"tool class {tool.__module__}.{tool.__qualname__}"


skills_view = IdentityCache(_skills_view)
tools_view = IdentityCache(_tools_view)
sorted_view = IdentityCache(_sorted_view)


def clear_view_caches() -> None:
    """For benchmarks and tests that want to measure or exercise the cold path."""
    for cache in (skills_view, tools_view, sorted_view):
        cache.clear()
