"""Run one tool call and always come back with a result the model can read.

A tool's failure is information for the model, not a crash of the creature: a ToolError
becomes its sentence, invalid arguments become a list of what is wrong, and any other
exception — ``SystemExit`` and ``KeyboardInterrupt`` raised by tool code included — becomes
a short "failed unexpectedly" line. Cancellation is not swallowed, so a cancel scope around
a turn still stops a hanging tool.

A tool whose ``run`` is a plain function (not ``async def``) runs in a daemon worker
thread: blocking code cannot freeze the event loop, and a cancelled call (``--timeout``)
returns at once, leaving the thread to finish on its own without holding the process.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict, ValidationError

from terrarium.crashpoints import crashpoint
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
    """Validate ``args`` against the tool's model, run it, and never raise (but on cancel).

    A side-effecting tool (``Tool.side_effects``) with a journal and a key in ``ctx`` runs
    at most once per key: its result is recorded, and a call with a recorded key (the same
    call of a turn run again after a crash) gets that result back without running.
    """
    name = getattr(tool, "name", getattr(tool, "__name__", type(tool).__name__))
    journal = ctx.journal if getattr(tool, "side_effects", False) else None
    key = ctx.effect_key
    if journal is not None and key is not None:
        crashpoint("tool.check")
        seen = journal.recorded(key)
        if seen is not None:
            return ToolResult(ok=seen[0], text=seen[1])
        res = await _run_tool(tool, name, args, ctx)
        crashpoint("tool.ran")
        journal.record(key, ctx.creature, name, res.ok, res.text)
        crashpoint("tool.recorded")
        return res
    return await _run_tool(tool, name, args, ctx)


async def _run_tool(
    tool: Tool | type[Tool], name: str, args: BaseModel | Mapping[str, Any], ctx: ToolContext
) -> ToolResult:
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
    cancelled = anyio.get_cancelled_exc_class()
    try:
        if inspect.iscoroutinefunction(instance.run):
            text = await instance.run(parsed, ctx)
        else:
            text = await _in_daemon_thread(instance.run, parsed, ctx, name=name)
    except cancelled:
        raise
    except TerrariumError as exc:
        msg = exc.message
        if exc.suggestion:
            msg += f" Hint: {exc.suggestion}"
        return ToolResult(ok=False, text=msg)
    except NotImplementedError:
        return ToolResult(ok=False, text=f"The tool {name} has no implementation.")
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, ...: the tool's, not ours
        if isinstance(exc, BaseExceptionGroup) and exc.subgroup(cancelled) is not None:
            raise
        return ToolResult(
            ok=False, text=f"The tool {name} failed unexpectedly: {type(exc).__name__}: {exc}"
        )
    if not isinstance(text, str):
        return ToolResult(
            ok=False, text=f"The tool {name} returned {type(text).__name__} instead of text."
        )
    return ToolResult(ok=True, text=text)


async def _in_daemon_thread(fn: Callable[..., Any], *args: Any, name: str) -> Any:
    """``fn(*args)`` in a daemon thread; cancelling the wait abandons the thread.

    Not ``anyio.to_thread``: its workers are not daemons, so a tool stuck in ``time.sleep``
    would keep the process alive past ``--timeout`` until it returned.
    """
    done = anyio.Event()
    box: dict[str, Any] = {}
    token = anyio.lowlevel.current_token()

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the waiting task
            box["error"] = exc
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except Exception:  # the loop is gone: nobody waits any more
            pass

    threading.Thread(target=target, name=f"tool {name}", daemon=True).start()
    await done.wait()
    if "error" in box:
        raise box["error"]
    return box["value"]


__all__ = [
    "ToolResult",
    "describe_validation",
    "run_tool",
]
