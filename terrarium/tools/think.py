"""``think``: a note to itself that stays in the turn.

Why a tool for this: a small model that must put its reasoning somewhere tends to put it in
the reply (or a channel message). A think call keeps the note in the turn's history, where
the next model round sees it, and returns only a short acknowledgement.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from terrarium.tools.base import Tool, ToolContext

__all__ = ["ThinkArgs", "ThinkTool"]


class ThinkArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thought: str = Field(min_length=1, max_length=20_000, description="the note to yourself",
                         json_schema_extra={"multiline": True})


class ThinkTool(Tool):
    name: ClassVar[str] = "think"
    summary: ClassVar[str] = "write down a thought or plan before acting"
    documentation: ClassVar[str] = (
        "Records thought in this turn's history and returns 'Noted.'. Nothing else happens: "
        "no one else sees it. Use it to plan steps or to weigh a tool's result."
    )
    args_model: ClassVar[type[BaseModel]] = ThinkArgs
    guidance: ClassVar[str] = (
        "For a task of several steps, call think first with a short plan, and again when "
        "a result surprises you."
    )
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ThinkArgs)
        return "Noted."
