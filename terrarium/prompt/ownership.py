"""One owner per fact: every variable, section, plugin, tool and channel has exactly one owner.

A second registration under the same name is a mistake somewhere in the wiring (two tools
called ``search``, a plugin shadowing a variable); failing loudly with both owners named is
cheaper than a prompt that silently says the wrong thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from terrarium.errors import RegistryError

T = TypeVar("T")


class OwnerTable(Generic[T]):
    """Name → (value, owner); duplicates are refused, listing is sorted by name."""

    kind: str = "entry"

    def __init__(self, kind: str | None = None) -> None:
        if kind is not None:
            self.kind = kind
        self._values: dict[str, T] = {}
        self._owners: dict[str, str] = {}

    def _refuse(self, name: str, owner: str) -> RegistryError:
        prior = self._owners[name]
        return RegistryError(
            f"The {self.kind} {name!r} is registered twice: first by {prior}, then by {owner}.",
            suggestion=f"give one of them a different name or let only {prior} own it",
        )

    def register(self, name: str, value: T, owner: str) -> None:
        """Record ``name``; a second owner for the same name is a RegistryError."""
        if name in self._owners:
            raise self._refuse(name, owner)
        self._owners[name] = owner
        self._values[name] = value

    def register_many(self, items: Iterable[tuple[str, T, str]]) -> None:
        """Register (name, value, owner) triples; one dict pass when there is no clash."""
        batch = list(items)
        values = {name: value for name, value, _ in batch}
        if len(values) == len(batch) and self._values.keys().isdisjoint(values):
            self._values.update(values)
            self._owners.update({name: owner for name, _, owner in batch})
            return
        for name, value, owner in batch:  # slow path only to name the clash precisely
            self.register(name, value, owner)

    def __contains__(self, name: object) -> bool:
        return name in self._owners

    def __len__(self) -> int:
        return len(self._owners)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._owners))

    def get(self, name: str) -> T:
        return self._values[name]

    def owner(self, name: str) -> str:
        return self._owners[name]

    def names(self) -> list[str]:
        """Registered names, sorted (so listings never depend on registration order)."""
        return sorted(self._owners)

    def as_dict(self) -> dict[str, T]:
        """Name → value in registration order (a copy; for lookups, not for listings)."""
        return dict(self._values)

    def values(self) -> dict[str, T]:
        """Name → value, in sorted name order."""
        return {n: self._values[n] for n in sorted(self._values)}


class VariableTable(OwnerTable[object]):
    """Template variables (``creature``, ``model``, ``cwd``, ``tools`` …) and their owners."""

    kind = "template variable"


class SectionTable(OwnerTable[str]):
    """Prompt sections by name; a plugin cannot shadow a built-in section."""

    kind = "prompt section"


__all__ = [
    "OwnerTable",
    "SectionTable",
    "T",
    "VariableTable",
]
