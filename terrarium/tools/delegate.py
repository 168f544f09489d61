"""Sub-agents as tools: each declared sub-agent is a call whose answer is its final reply.

The tool only knows the call's shape (a task, and the typed inputs the config declares);
running a sub-agent (its own controller, prompt, tools and limits) is the controller's
job, handed to the tool as a :class:`Delegator` in ``ctx.state[STATE_SUBAGENTS]`` — the
same pattern as the root creature's team tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, create_model

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext

__all__ = ["INPUT_TYPES", "STATE_PROGRESS", "STATE_SUBAGENTS", "Delegator", "SubagentTool",
           "subagent_tool"]

STATE_SUBAGENTS = "subagents"
STATE_PROGRESS = "job_progress"  # a list a background job's call may append its output to
INPUT_TYPES: Mapping[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


class Delegator(Protocol):
    """Runs one sub-agent on a task and returns its final answer (raises ToolError)."""

    async def delegate(self, name: str, task: str, inputs: Mapping[str, Any],
                       ctx: ToolContext) -> str: ...


class TaskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str = Field(description="The task, in full: the sub-agent sees nothing else.")


class SubagentTool(Tool):
    """Base of every sub-agent's tool class (one class per declared sub-agent)."""

    subagent: ClassVar[str] = ""
    concurrency_safe = True  # sub-agents share nothing but the run's concurrency limit
    args_model = TaskArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        host = ctx.state.get(STATE_SUBAGENTS)
        if host is None:
            raise ToolError(f"The sub-agent {self.subagent} is not available in this run.")
        data = args.model_dump()
        task = str(data.pop("task"))
        data.pop("background", None)  # the job flag is the framework's, not an input
        return await host.delegate(self.subagent, task, data, ctx)


def subagent_tool(name: str, description: str, inputs: Mapping[str, str]) -> type[Tool]:
    """The tool class of one sub-agent: ``task`` plus the declared typed inputs."""
    fields: dict[str, Any] = {
        k: (INPUT_TYPES[t], Field(description=f"Input {k} for the sub-agent."))
        for k, t in inputs.items()
    }
    args = create_model(f"{name.title().replace('_', '')}Task", __base__=TaskArgs, **fields)
    summary = description or f"Hand a task to the sub-agent {name}; returns its answer."
    return type(f"Subagent_{name}", (SubagentTool,), {
        "name": name, "summary": summary, "subagent": name, "args_model": args,
        "documentation": "A sub-agent works on its own, with its own prompt and tools, and "
        "answers once; give it everything it needs in `task`.",
    })
