"""A small MCP server the MCP tests start for real (stdio by default, or streamable HTTP).

Written with the SDK's ``MCPServer`` (mcp 2.x; it was ``FastMCP`` in mcp 1.x). Its tools
cover what the adapter must handle: typed and optional arguments with an enum (``search``),
an image result (``pixel``), an embedded resource (``readme``), and a tool that kills its
own process (``crash``) so a test can see a server die mid-run and come back.

Run: ``python -m tests.mcp_fixtures.server`` (stdio) or ``... --http PORT`` (streamable HTTP
on 127.0.0.1). ``MCP_FIXTURE_FAIL=1`` makes it exit before serving (a server that fails to
start); ``MCP_FIXTURE_TOKEN`` makes the HTTP mode require ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import Image, MCPServer
from mcp.types import EmbeddedResource, ImageContent, TextContent, TextResourceContents
from pydantic import Field

__all__ = ["PIXEL_PNG", "build_server", "main"]

# a 1x1 transparent PNG
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYGBgAAAABQABDQottAAAAABJRU5ErkJggg=="
)

CATALOGUE = {
    "apple": "a red fruit",
    "avocado": "a green fruit",
    "banana": "a yellow fruit",
    "basalt": "a dark rock",
}


def build_server() -> MCPServer:
    server = MCPServer("fixture")

    @server.tool()
    def search(
        query: Annotated[str, Field(description="letters the names start with")],
        limit: Annotated[int, Field(description="how many matches at most", ge=1, le=10)] = 3,
        order: Annotated[Literal["asc", "desc"], Field(description="sort order")] = "asc",
        exact: Annotated[bool | None, Field(description="match the whole name")] = None,
    ) -> str:
        """Search the catalogue by name prefix."""
        names = sorted(CATALOGUE, reverse=order == "desc")
        hits = [n for n in names if (n == query if exact else n.startswith(query))][:limit]
        return "; ".join(f"{n}: {CATALOGUE[n]}" for n in hits) or "no matches"

    @server.tool()
    def pixel(label: str = "pixel") -> list[TextContent | ImageContent]:
        """Return a tiny PNG image with a caption."""
        image = Image(data=PIXEL_PNG, format="png").to_image_content()
        return [TextContent(type="text", text=f"caption: {label}"), image]

    @server.tool()
    def readme() -> EmbeddedResource:
        """Return the catalogue's readme as an embedded resource."""
        return EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="fixture://readme", mime_type="text/plain", text="The catalogue lists things."))

    @server.tool()
    def tag(items: list[str], meta: dict[str, int] | None = None) -> str:
        """Join tags (a list argument and an optional object argument)."""
        return ",".join(items) + (f" {sorted(meta.items())}" if meta else "")

    @server.tool()
    def crash(code: int = 3) -> str:
        """Kill this server process at once (to test a server dying mid-run)."""
        sys.stdout.flush()
        os._exit(code)

    return server


def main(argv: list[str]) -> None:
    if os.environ.get("MCP_FIXTURE_FAIL"):
        print("fixture server: refusing to start (MCP_FIXTURE_FAIL)", file=sys.stderr)
        raise SystemExit(7)
    server = build_server()
    if argv[:1] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
