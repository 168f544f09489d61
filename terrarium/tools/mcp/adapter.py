"""One MCP tool as a creature tool: a ``Tool`` subclass built from its listing.

The class carries the tool's docs and args model (from its JSON schema, see ``schema``)
like any built-in, so the prompt index, ``info``, the call parsers, the grammar and the
runner's validation treat it the same way. Its ``run`` hands the call to the server's
connection (anything with an async ``call_tool(name, arguments)``) and turns the result's
content into text: text as it is, a short readable note for an image, audio or a binary
resource (a text model cannot see them), a resource's text with its URI.

Names: ``<server>__<tool>`` (characters outside ``[A-Za-z0-9_-]`` become ``_``, at most 64,
as function-calling APIs allow), so a server's tools sit together in the sorted tool index
and two servers' ``search`` tools cannot clash.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.mcp.schema import ArgsSchema, args_model_from_schema

__all__ = [
    "MAX_RESULT_CHARS",
    "McpCaller",
    "McpTool",
    "mcp_tool_class",
    "mcp_tool_name",
    "render_result",
]

MAX_RESULT_CHARS = 20_000
"""A result longer than this keeps its head and tail with a marker between."""
MAX_SUMMARY_CHARS = 160
_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")


class McpCaller(Protocol):
    """What a tool needs of its server's connection (``McpConnection`` is one)."""

    server: str

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...


def mcp_tool_name(server: str, tool: str) -> str:
    """The creature-side name of ``tool`` on ``server``: ``server__tool``, call-name safe."""
    name = _NAME_BAD.sub("_", f"{server}__{tool}")
    if not re.match(r"[A-Za-z_]", name):
        name = f"_{name}"
    return name[:64]


def _summary(description: str, server: str) -> str:
    first = next((ln.strip() for ln in description.splitlines() if ln.strip()), "")
    if not first:
        return f"a tool of the MCP server {server}"
    if len(first) > MAX_SUMMARY_CHARS:
        cut = first[:MAX_SUMMARY_CHARS].rsplit(" ", 1)[0]
        first = cut.rstrip(",;:") + "…"
    return first


class McpTool(Tool):
    """Base of the generated classes; ``connection`` None means "not connected" (the bench)."""

    server: ClassVar[str] = ""
    remote_name: ClassVar[str] = ""
    schema: ClassVar[ArgsSchema]
    connection: ClassVar[McpCaller | None] = None

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        conn = type(self).connection
        if conn is None:
            raise ToolError(f"The MCP server {self.server!r} is not connected.")
        result = await conn.call_tool(self.remote_name, self.schema.to_wire(args))
        text = render_result(result)
        if getattr(result, "is_error", False):
            raise ToolError(text or f"The MCP tool {self.remote_name} reported an error.")
        return text


def mcp_tool_class(
    server: str,
    remote_name: str,
    description: str | None,
    input_schema: Mapping[str, Any] | None,
    *,
    connection: McpCaller | None = None,
    read_only: bool = False,
    name: str | None = None,
) -> type[McpTool]:
    """A Tool class for one listed MCP tool (``name`` overrides ``server__tool``)."""
    tool_name = name or mcp_tool_name(server, remote_name)
    description = (description or "").strip()
    schema = args_model_from_schema(tool_name, dict(input_schema or {}))
    summary = _summary(description, server)
    # the docs follow the summary line (full_doc prints both): not the first line again
    first, _, rest = description.partition("\n")
    doc = rest.strip() if summary == first.strip() else description
    doc = (doc + "\n" if doc else "") + f"(Tool {remote_name!r} of the MCP server {server!r}.)"
    attrs = {
        "name": tool_name,
        "summary": summary,
        "documentation": doc,
        "args_model": schema.model,
        "schema": schema,
        "server": server,
        "remote_name": remote_name,
        "connection": connection,
        # read-only tools (the server's own readOnlyHint) may run side by side
        "concurrency_safe": read_only,
        "__module__": __name__,
        "__doc__": f"MCP tool {remote_name!r} of server {server!r}.",
    }
    class_name = "Mcp_" + _NAME_BAD.sub("_", tool_name)
    return type(class_name, (McpTool,), attrs)


def _size(data: str) -> str:
    try:
        n = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        n = len(data) * 3 // 4
    return f"{n:,} bytes"


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or kind
        return f"[{kind} {mime}, {_size(getattr(block, 'data', ''))}: not shown to you]"
    if kind == "resource_link":
        label = getattr(block, "title", None) or getattr(block, "name", None) or "resource"
        mime = f", {block.mime_type}" if getattr(block, "mime_type", None) else ""
        desc = f": {block.description}" if getattr(block, "description", None) else ""
        return f"[resource link {label} <{block.uri}>{mime}{desc}]"
    if kind == "resource":
        res = block.resource
        mime = f" ({res.mime_type})" if getattr(res, "mime_type", None) else ""
        if getattr(res, "text", None) is not None:
            return f"[resource {res.uri}{mime}]\n{res.text}"
        return f"[resource {res.uri}{mime}, {_size(getattr(res, 'blob', ''))} of binary data: " \
               "not shown to you]"
    return f"[{kind or 'unknown'} content: not shown to you]"


def _cap(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 3 // 4], text[-(limit // 4):]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} characters left out …]\n{tail}"


def render_result(result: Any) -> str:
    """An MCP ``CallToolResult`` as the text the model reads."""
    parts = [_block_text(b) for b in (getattr(result, "content", None) or ())]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return _cap("\n".join(p for p in parts if p))
