"""A team's ``mcp_servers``, connected: the extra tools each creature gets from them.

Listing a server's tools needs it running, so a creature's tool list is known only after
its servers are up: the runtime calls :func:`connect_mcp` inside an open ``McpHub`` (whose
task group keeps the servers up and reconnects them) and hands each creature's list to
``assemble(..., extra_tools=...)``. A server that fails to start becomes a located
``ConfigError`` naming the file and line that declared it, all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from terrarium import secrecy
from terrarium.config import CreatureDef, Team
from terrarium.config.models import EnvValue, McpServerConfig, SecretValue
from terrarium.errors import ConfigError, ConfigErrors
from terrarium.tools.base import Tool
from terrarium.tools.mcp.hub import McpHub, McpStartError
from terrarium.tools.mcp.params import HttpParams, McpParams, StdioParams

__all__ = ["connect_mcp", "creature_defs", "mcp_params"]


def creature_defs(team: Team, names: Iterable[str] | None = None) -> dict[str, CreatureDef]:
    """The team's creatures by the name ``assemble`` takes (the root creature as ``root``),
    or only those in ``names``."""
    defs = team.everyone
    wanted = set(defs) if names is None else set(names)
    return {n: defs[n] for n in sorted(defs) if n in wanted}


def _resolve(value: SecretValue, where: str) -> str:
    if isinstance(value, EnvValue):
        secret = secrecy.env(value.env)
        if secret is None:
            raise KeyError(f"{where} comes from the environment variable {value.env}, "
                           "which is not set")
        return value.prefix + secret
    return value


def _params(spec: McpServerConfig, folder: Path) -> McpParams:
    if spec.url is not None:
        return HttpParams(spec.url, {k: _resolve(v, f"header {k!r}")
                                     for k, v in spec.headers.items()},
                          spec.timeout, spec.startup_timeout)
    assert spec.command is not None  # checked at load: exactly one of command and url
    return StdioParams(
        spec.command, tuple(spec.args),
        {k: _resolve(v, f"environment variable {k!r}") for k, v in spec.env.items()},
        Path(spec.cwd) if spec.cwd else folder, spec.timeout, spec.startup_timeout)


def mcp_params(cdef: CreatureDef) -> dict[str, McpParams]:
    """The creature's servers as plain parameters, environment values read now."""
    out: dict[str, McpParams] = {}
    errors: list[ConfigError] = []
    for sname, spec in cdef.config.mcp_servers.items():
        try:
            out[sname] = _params(spec, cdef.folder)
        except KeyError as exc:
            errors.append(cdef.loaded.where("mcp_servers", sname).error(
                f"MCP server {sname!r}: {exc.args[0]}"))
    if errors:
        raise ConfigErrors(errors)
    return out


async def connect_mcp(
    team: Team, hub: McpHub, names: Iterable[str] | None = None
) -> dict[str, list[type[Tool]]]:
    """Start every MCP server of the team's creatures (or of ``names``) in ``hub``.

    Returns creature name -> its MCP tools (``server__tool`` classes, servers in name
    order); creatures without servers are left out. Raises ``ConfigErrors`` naming the
    config line of each server that did not start (the others are stopped with the hub).
    """
    defs = creature_defs(team, names)
    servers: dict[tuple[str, str], tuple[str, McpParams]] = {}
    errors: list[ConfigError] = []
    for key, cdef in defs.items():
        try:
            params = mcp_params(cdef)
        except ConfigErrors as exc:
            errors.extend(exc.errors)
            continue
        for sname in sorted(params):
            servers[(key, sname)] = (sname, params[sname])
    if errors:
        raise ConfigErrors(errors)
    try:
        tools = await hub.connect(servers)
    except McpStartError as exc:
        for fkey, (sname, _, why) in exc.failures.items():
            assert isinstance(fkey, tuple)
            cdef = defs[fkey[0]]
            errors.append(cdef.loaded.where("mcp_servers", sname).error(
                f"MCP server {sname!r} of creature {fkey[0]!r} did not start: {why}",
                "check the command and its arguments, or run it by hand to see why"))
        raise ConfigErrors(errors) from None
    out: dict[str, list[type[Tool]]] = {}
    for (creature, _), classes in sorted(tools.items()):  # type: ignore[misc]
        out.setdefault(creature, []).extend(classes)
    return out
