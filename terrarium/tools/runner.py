"""Run one tool call and always come back with a result the model can read.

A tool's failure is information for the model, not a crash of the creature: a ToolError
becomes its sentence, invalid arguments become a list of what is wrong, and any other
exception becomes a short "failed unexpectedly" line. Cancellation is not swallowed, so a
cancel scope around a turn still stops a hanging tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from terrarium.errors import TerrariumError
from terrarium.tools.base import Tool, ToolContext


class ToolResult(BaseModel):
    """What a tool call produced: ``ok`` False means ``text`` explains the failure."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    text: str


def describe_validation(tool_name: str, exc: ValidationError) -> str:
    """Validation errors as one sentence per field, short enough for a small model."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return f"The arguments for {tool_name} are invalid: " + "; ".join(parts) + "."


async def run_tool(
    tool: Tool | type[Tool],
    args: BaseModel | Mapping[str, Any],
    ctx: ToolContext,
) -> ToolResult:
    """Validate ``args`` against the tool's model, run it, and never raise (but on cancel)."""
    name = getattr(tool, "name", getattr(tool, "__name__", type(tool).__name__))
    try:
        instance = tool() if isinstance(tool, type) else tool
    except Exception as exc:
        return ToolResult(
            ok=False, text=f"The tool {name} could not be started: {type(exc).__name__}: {exc}"
        )
    try:
        model = instance.args_model
        if isinstance(args, model):
            parsed: BaseModel = args
        elif isinstance(args, BaseModel):
            parsed = model.model_validate(args.model_dump())
        else:
            parsed = model.model_validate(dict(args))
    except ValidationError as exc:
        return ToolResult(ok=False, text=describe_validation(name, exc))
    except Exception as exc:
        return ToolResult(ok=False, text=f"The arguments for {name} could not be read: {exc}.")
    try:
        text = await instance.run(parsed, ctx)
    except TerrariumError as exc:
        msg = exc.message
        if exc.suggestion:
            msg += f" Hint: {exc.suggestion}"
        return ToolResult(ok=False, text=msg)
    except NotImplementedError:
        return ToolResult(ok=False, text=f"The tool {name} has no implementation.")
    except Exception as exc:
        return ToolResult(
            ok=False, text=f"The tool {name} failed unexpectedly: {type(exc).__name__}: {exc}"
        )
    if not isinstance(text, str):
        return ToolResult(
            ok=False, text=f"The tool {name} returned {type(text).__name__} instead of text."
        )
    return ToolResult(ok=True, text=text)
