"""How to reach one MCP server, as plain values (the config layer fills them in).

Kept apart from the connection so that whoever builds them (the controller's glue, the
``tools`` command) need not import the MCP SDK. Values taken from the environment are
already resolved here: ``env`` and ``headers`` hold the final strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HttpParams", "McpParams", "StdioParams"]


@dataclass(frozen=True, slots=True)
class StdioParams:
    """A server started as a subprocess and spoken to over stdin/stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # over the SDK's safe default set
    cwd: Path | None = None
    timeout: float = 60.0  # one tool call
    startup_timeout: float = 30.0  # connect and list the tools

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@dataclass(frozen=True, slots=True)
class HttpParams:
    """A server reached over streamable HTTP."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    startup_timeout: float = 30.0

    def describe(self) -> str:
        return self.url


McpParams = StdioParams | HttpParams
