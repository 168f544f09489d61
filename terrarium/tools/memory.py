"""``memory_write`` and ``memory_search``: a creature's long-term facts.

Both use the MemoryStore under ``ToolContext.state["memory"]``. Facts are written under the
calling creature's name; searches see only that creature's facts unless the runtime sets
``state["memory_shared"] = True``. Output is terse on purpose: a 135M-parameter model
follows short numbered lines better than JSON.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.state import STATE_MEMORY_SHARED, memory_of

MAX_FACT_CHARS = 4000
MAX_SHOWN_CHARS = 300


class MemoryWriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_FACT_CHARS, description="the fact to remember")
    tags: list[str] = Field(
        default_factory=list, max_length=16, description="short labels to find it by"
    )


class MemorySearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="words to look for")
    limit: int = Field(default=5, ge=1, le=50, description="at most this many facts")


class MemoryWriteTool(Tool):
    name: ClassVar[str] = "memory_write"
    summary: ClassVar[str] = "remember a fact for later"
    documentation: ClassVar[str] = (
        "Stores one short fact in long-term memory. Writing the same fact again keeps one "
        "copy. Facts survive restarts when the run has a memory file."
    )
    args_model: ClassVar[type[BaseModel]] = MemoryWriteArgs
    guidance: ClassVar[str] = (
        "When the user tells you something worth keeping, save it with memory_write "
        "as one short sentence."
    )
    concurrency_safe: ClassVar[bool] = False
    needs_followup = False
    side_effects: ClassVar[bool] = True
    idempotent: ClassVar[bool] = True  # one row per fact; the call's key is its source

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, MemoryWriteArgs)
        store = memory_of(ctx)
        result = await store.awrite(args.text, creature=ctx.creature, tags=args.tags,
                                    source=ctx.effect_key)
        if result.created:
            return f"Remembered as #{result.id}."
        return f"Already remembered as #{result.id}."


class MemorySearchTool(Tool):
    name: ClassVar[str] = "memory_search"
    summary: ClassVar[str] = "find remembered facts by words"
    documentation: ClassVar[str] = (
        "Returns the best matching facts, best first, one per line as "
        "'#id fact [tags]'. Any word may match; more matching words rank higher."
    )
    args_model: ClassVar[type[BaseModel]] = MemorySearchArgs
    guidance: ClassVar[str] = (
        "Before answering a question about the user or earlier conversations, try memory_search."
    )
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, MemorySearchArgs)
        store = memory_of(ctx)
        shared = ctx.state.get(STATE_MEMORY_SHARED) is True
        hits = await store.asearch(
            args.query, limit=args.limit, creature=None if shared else ctx.creature
        )
        if not hits:
            return f"No memories match {args.query.strip()!r}."
        lines = []
        for hit in hits:
            text = hit.text
            if len(text) > MAX_SHOWN_CHARS:
                text = text[: MAX_SHOWN_CHARS - 1] + "…"
            tags = f" [{', '.join(hit.tags)}]" if hit.tags else ""
            who = f" ({hit.creature})" if shared and hit.creature != ctx.creature else ""
            lines.append(f"#{hit.id} {text}{tags}{who}")
        return "\n".join(lines)


__all__ = [
    "MAX_FACT_CHARS",
    "MAX_SHOWN_CHARS",
    "MemorySearchArgs",
    "MemorySearchTool",
    "MemoryWriteArgs",
    "MemoryWriteTool",
]
