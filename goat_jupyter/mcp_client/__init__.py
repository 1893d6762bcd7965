"""MCP client: servers from .mcp.json and settings, their status, resources and tool calls.

It sits below tools/: the tools' Registry (a ToolTable) turns each server's tools into
`mcp__{server}__{tool}` tools (tools/mcp/mcp_sync.py), and tools/mcp/mcp_results.py their results.

Importing this package is cheap; the `mcp` SDK is imported only when a server connects.
"""

from __future__ import annotations

from goat_jupyter.mcp_client.config import McpConfig, McpTimeouts, load_mcp_config
from goat_jupyter.mcp_client.manager import McpManager, ResourceListing, ToolTable, attach_mcp

__all__ = [
    "McpConfig",
    "McpManager",
    "McpTimeouts",
    "ResourceListing",
    "ToolTable",
    "attach_mcp",
    "load_mcp_config",
]
