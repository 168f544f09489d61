"""MCP servers as creature tools: each listed tool becomes a ``Tool`` class like any other.

Modules
    ``params``      ``StdioParams``, ``HttpParams``: how to reach a server, as plain values.
    ``schema``      ``args_model_from_schema``: a tool's JSON schema as a pydantic args model.
    ``adapter``     ``mcp_tool_class``: one listed tool as a Tool subclass (``server__tool``);
                    ``render_result``: a call's content as text (images etc. as a note).
    ``connection``  ``McpConnection``: one live server, its task, calls, reconnect with backoff
                    (imports the MCP SDK, which is slow to import: only when a server is used).
    ``connections`` ``McpConnections``: every server of a run in one task group; ``connect`` returns
                    the Tool classes per key; ``McpStartError`` for servers that fail to start.

This ``__init__`` imports nothing, so that using one module does not load the SDK.
"""


__all__: list[str] = []
