"""The keys built-in tools read from ``ToolContext.state``, and typed accessors for them.

The controller owns ``ToolContext``; it puts the creature's ``ToolRegistry`` under
``STATE_TOOLS`` and the team's ``MemoryStore`` under ``STATE_MEMORY``. Naming the keys in
one place keeps the tools and the controller from drifting apart.

The registry imports the built-in tools and the tools read the registry back from here, so
this module names what ``info`` needs as a protocol (``ToolCatalog``, which ``ToolRegistry``
satisfies) instead of importing the registry: the import graph stays a tree.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from terrarium.errors import ToolError
from terrarium.store.facts import MemoryStore
from terrarium.tools.base import Tool, ToolContext

__all__ = [
    "STATE_MEMORY",
    "STATE_MEMORY_SHARED",
    "STATE_TOOLS",
    "ToolCatalog",
    "memory_of",
    "registry_of",
]


@runtime_checkable
class ToolCatalog(Protocol):
    """What ``info`` reads from a creature's tools: ``ToolRegistry`` is the one implementation."""

    def names(self) -> list[str]: ...

    def get(self, name: str) -> type[Tool]: ...


STATE_TOOLS = "tools"
"""``ToolContext.state[STATE_TOOLS]``: the ToolRegistry of tools this creature may call."""

STATE_MEMORY = "memory"
"""``ToolContext.state[STATE_MEMORY]``: the MemoryStore the memory tools read and write."""

STATE_MEMORY_SHARED = "memory_shared"
"""``ToolContext.state[STATE_MEMORY_SHARED]``: True lets memory_search see every creature's
facts; absent or False limits it to the calling creature's own."""


def registry_of(ctx: ToolContext) -> ToolCatalog:
    """The creature's tool registry, or a ToolError saying the runtime did not provide one."""
    reg = ctx.state.get(STATE_TOOLS)
    if not isinstance(reg, ToolCatalog):
        raise ToolError(
            f"No tool registry is available to creature {ctx.creature!r}, "
            f"so tool documentation cannot be looked up."
        )
    return reg


def memory_of(ctx: ToolContext) -> MemoryStore:
    """The memory store, or a ToolError saying memory is not enabled for this creature."""
    store = ctx.state.get(STATE_MEMORY)
    if not isinstance(store, MemoryStore):
        raise ToolError(f"Memory is not enabled for creature {ctx.creature!r}.")
    return store
