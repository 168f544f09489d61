"""A small real MCP server (the SDK's MCPServer, formerly FastMCP) for the MCP tests."""
