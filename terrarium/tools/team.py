"""Team tools for the optional root creature: see the team, send, stop and start creatures.

They reach the running team through ``ToolContext.state["team"]``, set only for the root;
any other creature naming them gets a clear refusal instead. What they call on it is the
small :class:`TeamControl` protocol (the runtime's ``TeamRuntime`` fits it), so the tools
sit with the other tools and both assembly and the runtime import them from below.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ChannelRefusal, ToolError
from terrarium.tools.base import NoArgs, Tool, ToolContext

__all__ = [
    "KT_TEAM_ALIASES",
    "STATE_TEAM",
    "TEAM_TOOLS",
    "CreatureIdArgs",
    "CreatureNameArgs",
    "CreatureNumbers",
    "GroupStartNodeTool",
    "GroupStatusTool",
    "GroupStopNodeTool",
    "StartCreatureTool",
    "StopCreatureTool",
    "TeamControl",
    "TeamSendArgs",
    "TeamSendTool",
    "TeamStatusTool",
]

STATE_TEAM = "team"
"""The ``ToolContext.state`` key of the running team (a :class:`TeamControl`)."""


class CreatureNumbers(Protocol):
    """One creature's live numbers, as ``team_status`` reports them."""

    @property
    def state(self) -> str: ...
    @property
    def turns(self) -> int: ...
    @property
    def tokens_in(self) -> int: ...
    @property
    def tokens_out(self) -> int: ...
    @property
    def restarts(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...


class TeamControl(Protocol):
    """What the team tools call on the running team."""

    @property
    def statuses(self) -> Mapping[str, CreatureNumbers]: ...

    async def send_as_root(self, channel: str, payload: Mapping[str, Any]) -> int: ...

    async def stop_creature(self, name: str) -> None: ...

    async def start_creature(self, name: str) -> None: ...


def _team(ctx: ToolContext) -> TeamControl:
    team: TeamControl | None = ctx.state.get(STATE_TEAM)
    if team is None:
        raise ToolError("team tools work only for the terrarium's root creature")
    return team


class TeamStatusTool(Tool):
    name: ClassVar[str] = "team_status"
    summary: ClassVar[str] = "list the team's creatures with their state and numbers"
    documentation: ClassVar[str] = (
        "One line per creature: state, turns, tokens in and out, restarts, last error."
    )
    args_model: ClassVar[type[BaseModel]] = NoArgs
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        rt = _team(ctx)
        lines = []
        for name in sorted(rt.statuses):
            s = rt.statuses[name]
            err = f", last error: {s.last_error}" if s.last_error else ""
            lines.append(f"{name}: {s.state}, {s.turns} turns, {s.tokens_in} in / "
                         f"{s.tokens_out} out, {s.restarts} restarts{err}")
        return "\n".join(lines)


class TeamSendArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    channel: str = Field(description="the channel to send on")
    payload: str = Field(description='the message as a JSON object, e.g. {"text": "hi"}')


class TeamSendTool(Tool):
    name: ClassVar[str] = "team_send"
    summary: ClassVar[str] = "send a typed message on any channel of the team"
    documentation: ClassVar[str] = (
        "The payload is checked against the channel's schema; a refusal says why."
    )
    args_model: ClassVar[type[BaseModel]] = TeamSendArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, TeamSendArgs)
        try:
            payload = json.loads(args.payload)
        except json.JSONDecodeError as exc:
            raise ToolError(f"the payload is not valid JSON ({exc.msg})") from None
        if not isinstance(payload, dict):
            raise ToolError("the payload must be a JSON object")
        try:
            n = await _team(ctx).send_as_root(args.channel, payload)
        except ChannelRefusal as exc:
            raise ToolError(f"refused: {exc.message}") from None
        return f"Sent on {args.channel} to {n} listener{'s' if n != 1 else ''}."


class CreatureNameArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="the creature's name")


class StopCreatureTool(Tool):
    name: ClassVar[str] = "stop_creature"
    summary: ClassVar[str] = "stop one creature (its unread messages wait for it)"
    args_model: ClassVar[type[BaseModel]] = CreatureNameArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        name = _creature_named(args)
        await _team(ctx).stop_creature(name)
        return f"{name} stopped."


class StartCreatureTool(Tool):
    name: ClassVar[str] = "start_creature"
    summary: ClassVar[str] = "start a stopped or failed creature again"
    args_model: ClassVar[type[BaseModel]] = CreatureNameArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        name = _creature_named(args)
        await _team(ctx).start_creature(name)
        return f"{name} started."


TEAM_TOOLS: tuple[type[Tool], ...] = (
    StartCreatureTool, StopCreatureTool, TeamSendTool, TeamStatusTool,
)


# -- KohakuTerrarium's names for the same team tools (a KT-form root creature has them) ----


class GroupStatusTool(TeamStatusTool):
    """KohakuTerrarium's ``group_status``: terrarium's ``team_status``."""

    name: ClassVar[str] = "group_status"


class CreatureIdArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    creature_id: str = Field(description="the creature's name")


class GroupStopNodeTool(StopCreatureTool):
    """KohakuTerrarium's ``group_stop_node``: terrarium's ``stop_creature``."""

    name: ClassVar[str] = "group_stop_node"
    args_model: ClassVar[type[BaseModel]] = CreatureIdArgs


class GroupStartNodeTool(StartCreatureTool):
    """KohakuTerrarium's ``group_start_node``: terrarium's ``start_creature``."""

    name: ClassVar[str] = "group_start_node"
    args_model: ClassVar[type[BaseModel]] = CreatureIdArgs


def _creature_named(args: BaseModel) -> str:
    """The creature a start/stop call names: ``name``, or KohakuTerrarium's ``creature_id``."""
    if isinstance(args, CreatureIdArgs):
        return args.creature_id
    assert isinstance(args, CreatureNameArgs)
    return args.name


KT_TEAM_ALIASES: tuple[type[Tool], ...] = (GroupStartNodeTool, GroupStatusTool,
                                           GroupStopNodeTool)

