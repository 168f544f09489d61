"""``terrarium tools PATH CREATURE``: every tool a creature will have, with where it comes from.

Built-in, Python (``package.module:Class``), the root creature's team tools, and MCP tools:
an MCP server's tools are known only from the server itself, so this command starts the
creature's servers, lists their tools and stops them again. A server that does not start is
reported (with its config line) after the tools that could be listed, and the exit code is 2.

As in ``inspect``, what only this command needs (the dry start, the MCP connections) is
imported inside it, so other commands do not pay for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terrarium.cli.targets import load_one_team
from terrarium.config import Team
from terrarium.errors import ConfigErrors, TerrariumError

if TYPE_CHECKING:
    from terrarium.config.models import CreatureConfig
    from terrarium.tools.base import Tool

__all__ = ["cmd_tools", "tool_rows"]


def tool_source(tool: type[Tool], config: CreatureConfig | None = None) -> str:
    """Where a tool comes from, in a few words (a sub-agent by its config, never by the
    class the runtime made for it)."""
    from terrarium.controller.jobs import JOB_TOOLS
    from terrarium.tools.mcp.adapter import McpTool
    from terrarium.tools.registry import BUILTIN_TOOLS
    from terrarium.tools.team import TEAM_TOOLS

    if config is not None and tool.name in config.subagents:
        entry = config.subagents[tool.name]
        where = _short_path(str(entry if isinstance(entry, str) else entry.config))
        bg = ", background by default" if config.background.get(tool.name) else ""
        return f"sub-agent: {where}{bg}"
    if tool in JOB_TOOLS:
        return "background jobs"
    if config is not None and config.background.get(tool.name) is not None:
        tool = next((b for b in tool.__mro__[1:] if getattr(b, "name", None) == tool.name),
                    tool)  # a call given a `background` flag: where its tool came from
    if isinstance(tool, type) and issubclass(tool, McpTool):
        return f"mcp: {tool.server}"
    if BUILTIN_TOOLS.get(tool.name) is tool:
        return "built-in"
    if tool in TEAM_TOOLS:
        return "team (root)"
    return f"python: {tool.__module__}:{tool.__qualname__}"


def _short_path(path: str) -> str:
    """A path relative to the current folder when it is under it (shorter to read)."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return rel if not rel.startswith("..") else path


def tool_rows(tools: list[type[Tool]], config: CreatureConfig | None = None
              ) -> list[dict[str, str]]:
    """One row per tool, in the registry's (name) order."""
    return [{"name": t.name, "source": tool_source(t, config), "summary": t.summary}
            for t in tools]


async def _collect(team: Team, name: str) -> tuple[list[type[Tool]], ConfigErrors | None]:
    from terrarium.controller.mcp import connect_mcp
    from terrarium.runtime.preflight import dry_start
    from terrarium.tools.mcp.connections import McpConnections, tool_classes

    failed: ConfigErrors | None = None
    async with McpConnections() as mcp:
        try:
            extra = (await connect_mcp(team, mcp, [name])).get(name, [])
        except ConfigErrors as exc:
            failed = exc
            extra = [cls for key, conn in sorted(mcp.connections.items(), key=str)
                     if isinstance(key, tuple) and key[0] == name
                     for cls in tool_classes(conn)]
        # the dry start every command shares, with the servers' tools: its refusals, exit 2
        dry = dry_start(team, names=[name], extra_tools={name: extra}).raise_errors()
        return dry.parts[name].registry.tools(), failed


def cmd_tools(args: argparse.Namespace) -> int:
    import anyio

    from terrarium.controller.mcp import creature_defs

    result = load_one_team(Path(args.path), "tools", args.creature)
    defs = creature_defs(result)
    if args.creature not in defs:
        raise TerrariumError(f"there is no creature {args.creature!r} in {result.name!r}",
                             suggestion=f"creatures: {', '.join(defs)}")
    servers = defs[args.creature].config.mcp_servers
    tools, failed = anyio.run(_collect, result, args.creature)
    rows = tool_rows(tools, defs[args.creature].config)
    sandbox = None
    if any(r["name"] == "shell" and r["source"] == "built-in" for r in rows):
        from terrarium.tools.shell import sandbox_line

        sandbox = sandbox_line(defs[args.creature].config.tool_options.get("shell", {}))[1]
    if args.json:
        out: dict[str, Any] = {"creature": args.creature, "tools": rows}
        if sandbox is not None:
            out["shell_sandbox"] = sandbox
        if failed is not None:
            out["errors"] = [e.render() for e in failed.errors]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        where = defs[args.creature].loaded.path
        started = f", {len(servers)} MCP server{'s' if len(servers) != 1 else ''}" \
            if servers else ""
        count = f"{len(rows)} tool{'s' if len(rows) != 1 else ''}"
        print(f"creature {args.creature!r} ({where}): {count}{started}")
        w_name = max((len(r["name"]) for r in rows), default=4)
        w_src = max((len(r["source"]) for r in rows), default=6)
        for r in rows:
            print(f"  {r['name']:<{w_name}}  {r['source']:<{w_src}}  {r['summary']}")
        if sandbox is not None:
            print(sandbox)
        if failed is not None:
            print(failed.render(), file=sys.stderr)
    return 2 if failed is not None else 0
