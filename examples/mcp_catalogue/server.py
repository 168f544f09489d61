"""A tiny MCP server for the mcp_catalogue example (the MCP SDK's MCPServer, over stdio).

Any MCP server works the same way; this one needs nothing but the ``mcp`` package that
terrarium itself depends on. Try it alone: ``python server.py`` speaks MCP on stdin/stdout.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

CATALOGUE = {
    "apple": ("fruit", "a crisp red fruit"),
    "avocado": ("fruit", "a creamy green fruit"),
    "banana": ("fruit", "a soft yellow fruit"),
    "basalt": ("rock", "a dark volcanic rock"),
    "granite": ("rock", "a speckled hard rock"),
}

server = MCPServer("catalogue")


@server.tool()
def search(
    prefix: Annotated[str, Field(description="the first letters of the name")],
    kind: Annotated[Literal["fruit", "rock", "any"], Field(description="what kind")] = "any",
    limit: Annotated[int, Field(description="most results", ge=1, le=10)] = 5,
) -> str:
    """Find catalogue entries whose name starts with a prefix."""
    hits = [name for name, (k, _) in sorted(CATALOGUE.items())
            if name.startswith(prefix.lower()) and kind in ("any", k)][:limit]
    return "\n".join(f"{n}: {CATALOGUE[n][1]}" for n in hits) or "nothing found"


@server.tool()
def count(kind: Literal["fruit", "rock"]) -> int:
    """How many entries of a kind the catalogue holds."""
    return sum(1 for k, _ in CATALOGUE.values() if k == kind)


if __name__ == "__main__":
    server.run("stdio")
