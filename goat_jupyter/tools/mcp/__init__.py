"""The MCP tools: each connected server's tools as `mcp__{server}__{tool}` (mcp_tool.py, made by
mcp_sync.py, results turned into ToolOutput by mcp_results.py), and ListMcpResources and
ReadMcpResource. The clients and the server manager: goat_jupyter/mcp_client/.

The catalog uses the name below; the other helpers are this family's own (tests/test_architecture.py)."""

from goat_jupyter.tools.mcp.mcp_sync import server_tools

__all__ = ["server_tools"]
