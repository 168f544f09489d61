"""``info``: the full documentation of one tool, on demand.

In ``dynamic`` skill mode the prompt lists tools by name and one line only, which keeps the
byte-stable prefix small; the model calls ``info`` when it needs the details.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError, closest_name
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.state import registry_of


class InfoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the tool to describe")


class InfoTool(Tool):
    name: ClassVar[str] = "info"
    summary: ClassVar[str] = "show the full documentation of a tool"
    documentation: ClassVar[str] = (
        "Returns the tool's description and every argument with its type and default. "
        "Only tools available to this creature can be described."
    )
    args_model: ClassVar[type[BaseModel]] = InfoArgs
    guidance: ClassVar[str] = (
        "Before using a tool for the first time, call info with its name to read its arguments."
    )
    guidance_bucket = "first"
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, InfoArgs)
        registry = registry_of(ctx)
        wanted = args.name.strip()
        names = registry.names()
        if wanted in names:
            return registry.get(wanted).full_doc()
        close = closest_name(wanted, names)
        hint = f" Did you mean {close!r}?" if close else ""
        raise ToolError(
            f"There is no tool named {wanted!r}.{hint} Known tools: {', '.join(names)}."
        )


__all__ = [
    "InfoArgs",
    "InfoTool",
]
