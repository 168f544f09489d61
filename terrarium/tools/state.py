"""The keys built-in tools read from ``ToolContext.state``, and typed accessors for them.

The controller owns ``ToolContext``; it puts the creature's ``ToolRegistry`` under
``STATE_TOOLS`` and the team's ``MemoryStore`` under ``STATE_MEMORY``. Naming the keys in
one place keeps the tools and the controller from drifting apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from terrarium.errors import ToolError
from terrarium.tools.base import ToolContext

if TYPE_CHECKING:
    from terrarium.store.facts import MemoryStore
    from terrarium.tools.registry import ToolRegistry

STATE_TOOLS = "tools"
"""``ToolContext.state[STATE_TOOLS]``: the ToolRegistry of tools this creature may call."""

STATE_MEMORY = "memory"
"""``ToolContext.state[STATE_MEMORY]``: the MemoryStore the memory tools read and write."""

STATE_MEMORY_SHARED = "memory_shared"
"""``ToolContext.state[STATE_MEMORY_SHARED]``: True lets memory_search see every creature's
facts; absent or False limits it to the calling creature's own."""


def registry_of(ctx: ToolContext) -> ToolRegistry:
    """The creature's tool registry, or a ToolError saying the runtime did not provide one."""
    from terrarium.tools.registry import ToolRegistry

    reg = ctx.state.get(STATE_TOOLS)
    if not isinstance(reg, ToolRegistry):
        raise ToolError(
            f"No tool registry is available to creature {ctx.creature!r}, "
            f"so tool documentation cannot be looked up."
        )
    return reg


def memory_of(ctx: ToolContext) -> MemoryStore:
    """The memory store, or a ToolError saying memory is not enabled for this creature."""
    from terrarium.store.facts import MemoryStore

    store = ctx.state.get(STATE_MEMORY)
    if not isinstance(store, MemoryStore):
        raise ToolError(f"Memory is not enabled for creature {ctx.creature!r}.")
    return store
