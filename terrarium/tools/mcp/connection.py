"""One live MCP server: connect, list its tools, call them, and reconnect when it dies.

Why a task of its own: the SDK's ``Client`` is an async context manager whose transport
(a subprocess, an HTTP stream) lives in task groups that must be entered and left by the
same task. ``McpConnection.run`` is that task, started in the mcp's task group: it holds the
client open, serves calls from any task, and when the server goes away (a call finds the
connection closed, or a periodic ping fails) it leaves the context, waits (backoff 0.5 s
doubling to 30 s) and connects again. A call while the server is down waits a little for
it to come back, then fails with a ToolError the model can read; nothing else notices.

A server that cannot be started the first time is not retried: ``run`` reports the failure
through ``start_error`` (with the last lines it wrote to stderr) and ends, and the mcp
raises it as a start error naming the server.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import IO, Any

import anyio
import httpx2
from anyio.abc import TaskStatus
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, CallToolResult, Implementation
from mcp.types import Tool as McpToolInfo

from terrarium.errors import ToolError
from terrarium.tools.mcp.params import HttpParams, McpParams, StdioParams

__all__ = ["BACKOFF", "McpConnection", "McpToolInfo"]

BACKOFF: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds before each reconnection attempt; the last repeats."""
PING_INTERVAL = 15.0
RECONNECT_WAIT = 5.0  # how long a call waits for a server that is coming back
_STDERR_TAIL = 600  # characters of the server's stderr quoted in a start error
_CLIENT_INFO = Implementation(name="terrarium", version="0.1.0")


class McpConnection:
    """The connection to one server (``server`` is its name in the creature's config)."""

    def __init__(self, server: str, params: McpParams, *,
                 backoff: Sequence[float] = BACKOFF, ping_interval: float = PING_INTERVAL,
                 reconnect_wait: float = RECONNECT_WAIT) -> None:
        self.server = server
        self.params = params
        self.backoff = tuple(backoff) or BACKOFF
        self.ping_interval = ping_interval
        self.reconnect_wait = reconnect_wait
        self.tools: list[McpToolInfo] = []  # as listed at the first connection
        self.start_error: str | None = None  # set when the first connection failed
        self.last_error: str | None = None
        self.connects = 0  # successful connections so far (1 after start)
        self._client: Client | None = None
        self._up = anyio.Event()
        self._broken = anyio.Event()
        self._stderr: IO[str] | None = None

    @property
    def connected(self) -> bool:
        return self._client is not None

    # -- the connection task -------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, report ``started`` (check ``start_error``), then keep the server up."""
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            self._stderr = errlog
            try:
                await self._serve(task_status)
            finally:
                self._client = None
                self._stderr = None

    async def _serve(self, task_status: TaskStatus[None]) -> None:
        attempt = 0
        while True:
            try:
                await self._session(task_status)
                attempt = 0  # it was up; a fresh run of delays if it goes again
            except Exception as exc:
                self.last_error = _describe(exc)
                if self.connects == 0:
                    self.start_error = self._with_stderr(self.last_error)
                    task_status.started()
                    return
            delay = self.backoff[min(attempt, len(self.backoff) - 1)]
            attempt += 1
            await anyio.sleep(delay)

    async def _session(self, task_status: TaskStatus[None]) -> None:
        """One connection, from connect to the moment it is found broken."""
        self._broken = anyio.Event()
        startup = self.params.startup_timeout
        with anyio.CancelScope(deadline=anyio.current_time() + startup) as scope:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._client_for(stack))
                tools = await _list_all(client)
                scope.deadline = math.inf  # connected: the startup limit no longer applies
                if self.connects == 0:
                    self.tools = tools
                self.connects += 1
                self.last_error = None
                self._client = client
                self._up.set()
                if self.connects == 1:
                    task_status.started()
                try:
                    await self._watch(client)
                finally:
                    self._down(client)
        if scope.cancelled_caught:
            raise TimeoutError(f"no answer within {startup:g} s")

    def _client_for(self, stack: AsyncExitStack) -> Client:
        p = self.params
        if isinstance(p, StdioParams):
            params = StdioServerParameters(
                command=p.command, args=list(p.args), env=dict(p.env) or None,
                cwd=str(p.cwd) if p.cwd else None)
            assert self._stderr is not None
            transport: Any = stdio_client(params, errlog=self._stderr)
        else:
            assert isinstance(p, HttpParams)
            http = httpx2.AsyncClient(headers=dict(p.headers),
                                      timeout=httpx2.Timeout(30.0, read=300.0))
            stack.push_async_callback(http.aclose)
            transport = streamable_http_client(p.url, http_client=http)
        return Client(transport, client_info=_CLIENT_INFO, cache=None)

    async def _watch(self, client: Client) -> None:
        """Wait until a call finds the server gone, pinging now and then to notice sooner."""
        while not self._broken.is_set():
            with anyio.move_on_after(self.ping_interval):
                await self._broken.wait()
            if self._broken.is_set():
                return
            try:
                with anyio.fail_after(min(10.0, self.params.timeout)):
                    await client.send_ping()
            except Exception as exc:
                self.last_error = f"it stopped answering pings ({_describe(exc)})"
                return

    def _with_stderr(self, message: str) -> str:
        if self._stderr is None:
            return message
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            tail = self._stderr.read()[-_STDERR_TAIL:].strip()
        except (OSError, ValueError):
            tail = ""
        return f"{message}; its stderr ends: {tail}" if tail else message

    # -- calls from any task ---------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``name``; a server that is down or goes away is a ToolError, never a crash."""
        client = self._client
        if client is None:
            with anyio.move_on_after(self.reconnect_wait):
                await self._up.wait()
            client = self._client
            if client is None:
                why = f" ({self.last_error})" if self.last_error else ""
                raise ToolError(
                    f"The MCP server {self.server!r} is not reachable{why}; it is being "
                    "restarted, try again in a moment.")
        try:
            with anyio.fail_after(self.params.timeout):
                return await client.call_tool(name, arguments)
        except TimeoutError:
            raise ToolError(f"The MCP server {self.server!r} did not answer {name} within "
                            f"{self.params.timeout:g} s.") from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise ToolError(f"The MCP server {self.server!r} refused {name}: "
                                f"{exc.message}") from None
            self._lost(client, "the connection closed during a call")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                httpx2.HTTPError, OSError) as exc:
            self._lost(client, _describe(exc))
        raise ToolError(f"The MCP server {self.server!r} went away during {name} "
                        f"({self.last_error}); it is being restarted, the call may not have "
                        "happened.")

    def _lost(self, client: Client, why: str) -> None:
        if self._client is client:
            self.last_error = why
            self._down(client)
            self._broken.set()

    def _down(self, client: Client) -> None:
        """Calls from now on wait for the next connection (a fresh ``_up``)."""
        if self._client is client:
            self._client = None
            self._up = anyio.Event()


async def _list_all(client: Client) -> list[McpToolInfo]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the real cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection"
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, (OSError, TimeoutError)) else f"{type(exc).__name__}: {text}"
