"""MCP client: servers from .mcp.json and settings, exposed as `mcp__{server}__{tool}` tools.

Importing this package is cheap; the `mcp` SDK is imported only when a server connects.
"""

from __future__ import annotations

from goat_jupyter.mcp.config import McpConfig, McpTimeouts, load_mcp_config
from goat_jupyter.mcp.manager import McpManager, attach_mcp

__all__ = ["McpConfig", "McpManager", "McpTimeouts", "attach_mcp", "load_mcp_config"]
