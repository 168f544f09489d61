"""One owner per fact: every variable, section, plugin, tool and channel has exactly one owner.

A second registration under the same name is a mistake somewhere in the wiring (two tools
called ``search``, a plugin shadowing a variable); failing loudly with both owners named is
cheaper than a prompt that silently says the wrong thing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from terrarium.errors import RegistryError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry(Generic[T]):
    """A registered value and the part of the runtime that owns it."""

    name: str
    value: T
    owner: str


class Registry(Generic[T]):
    """Name → (value, owner); duplicates are refused, listing is sorted by name."""

    kind: str = "entry"

    def __init__(self, kind: str | None = None) -> None:
        if kind is not None:
            self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, value: T, owner: str) -> None:
        """Record ``name``; a second owner for the same name is a RegistryError."""
        prior = self._entries.get(name)
        if prior is not None:
            raise RegistryError(
                f"The {self.kind} {name!r} is registered twice: first by {prior.owner}, "
                f"then by {owner}.",
                suggestion=f"give one of them a different name or let only {prior.owner} own it",
            )
        self._entries[name] = Entry(name, value, owner)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def get(self, name: str) -> T:
        return self._entries[name].value

    def owner(self, name: str) -> str:
        return self._entries[name].owner

    def names(self) -> list[str]:
        """Registered names, sorted (so listings never depend on registration order)."""
        return sorted(self._entries)

    def values(self) -> dict[str, T]:
        """Name → value, in sorted name order."""
        return {n: self._entries[n].value for n in sorted(self._entries)}


class VariableRegistry(Registry[object]):
    """Template variables (``creature``, ``model``, ``cwd``, ``tools`` …) and their owners."""

    kind = "template variable"


class SectionRegistry(Registry[str]):
    """Prompt sections by name; a plugin cannot shadow a built-in section."""

    kind = "prompt section"
