"""Every MCP server of a run, kept up in one task group, and their tools as Tool classes.

``async with McpConnections() as mcp:`` owns a task group in which each server's connection
task runs (see ``connection``); ``await mcp.connect({key: (server, params)})`` starts them all at
once, waits until each is up with its tools listed, and returns one list of Tool classes per
key. A server that fails to start does not stop the others from being tried; all failures
are raised together as ``McpStartError`` (``failures``: key -> why), so the caller can name
the config line of each. Leaving the block stops every server.

The MCP SDK is imported only when a server is actually connected: it takes over a second
to import, and most creatures have no MCP server.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from terrarium.errors import TerrariumError
from terrarium.tools.mcp.adapter import McpTool, mcp_tool_class
from terrarium.tools.mcp.params import McpParams

if TYPE_CHECKING:
    from terrarium.tools.mcp.connection import McpConnection

__all__ = ["McpConnections", "McpStartError"]


class McpStartError(TerrariumError):
    """One or more MCP servers could not be started; ``failures`` says which and why."""

    def __init__(self, failures: Mapping[Hashable, tuple[str, McpParams, str]]) -> None:
        self.failures = dict(failures)  # key -> (server name, params, why)
        lines = [f"MCP server {srv!r} ({p.describe()}) did not start: {why}"
                 for srv, p, why in self.failures.values()]
        super().__init__("; ".join(lines))


class McpConnections:
    """The connections of one run; an async context manager around their task group."""

    def __init__(self, **connection_options: Any) -> None:
        self.connections: dict[Hashable, McpConnection] = {}
        self._options = connection_options  # backoff, ping_interval, reconnect_wait
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> McpConnections:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()  # stops every server (the SDK shuts each one down)
        try:
            # The body's own exception is not handed to the task group, which would wrap it
            # in an ExceptionGroup: a ConfigErrors from connect stays a ConfigErrors.
            await self._tg.__aexit__(None, None, None)
        finally:
            self._tg = None
        return None

    async def connect(
        self, servers: Mapping[Hashable, tuple[str, McpParams]]
    ) -> dict[Hashable, list[type[McpTool]]]:
        """Start ``servers`` (key -> (server name, params)); their tools by key."""
        if self._tg is None:
            raise RuntimeError(
                "McpConnections.connect needs `async with McpConnections() as mcp:` first")
        if not servers:
            return {}
        from terrarium.tools.mcp.connection import McpConnection

        tg = self._tg
        new = {key: McpConnection(name, params, **self._options)
               for key, (name, params) in servers.items()}
        async with anyio.create_task_group() as starting:
            for conn in new.values():
                starting.start_soon(tg.start, conn.run)
        failures = {key: (c.server, c.params, c.start_error)
                    for key, c in new.items() if c.start_error is not None}
        self.connections.update(
            {key: c for key, c in new.items() if c.start_error is None})
        if failures:
            raise McpStartError(failures)  # type: ignore[arg-type]
        return {key: tool_classes(conn) for key, conn in new.items()}


def tool_classes(conn: McpConnection) -> list[type[McpTool]]:
    """One Tool class per tool the server listed, named ``server__tool``."""
    out: list[type[McpTool]] = []
    seen: set[str] = set()
    for info in conn.tools:
        annotations = getattr(info, "annotations", None)
        read_only = bool(getattr(annotations, "read_only_hint", False))
        cls = mcp_tool_class(conn.server, info.name, info.description, info.input_schema,
                             connection=conn, read_only=read_only)
        name, n = cls.name, 2
        while cls.name in seen:  # two remote names that tidy to the same name
            cls = mcp_tool_class(conn.server, info.name, info.description, info.input_schema,
                                 connection=conn, read_only=read_only, name=f"{name}_{n}")
            n += 1
        seen.add(cls.name)
        out.append(cls)
    return out
