"""The panel's "test connection": connect to one MCP server configuration, list its tools, disconnect."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from goat_jupyter.mcp_client.client import ServerConnection
from goat_jupyter.mcp_client.config import McpTimeouts, parse_server

CONNECT_TIMEOUT_S = 20.0


async def check_connection(name: str, raw: object, cwd: Path) -> dict[str, Any]:
    """`{"ok": True, "tools": [...]}` or `{"ok": False, "error": "..."}`; never raises for a bad server."""
    try:
        config = parse_server(raw, os.environ)
    except ValueError as exc:
        return {"ok": False, "error": f"invalid configuration: {exc}"}
    timeouts = McpTimeouts(connect_s=CONNECT_TIMEOUT_S)
    conn = ServerConnection(name or "test", config, cwd=cwd, timeouts=timeouts)
    conn.start()
    try:
        await conn.wait_settled(CONNECT_TIMEOUT_S + 5)
        if conn.status != "connected":
            return {"ok": False, "error": conn.error or f"status {conn.status}"}
        return {"ok": True, "tools": [tool.name for tool in conn.tools]}
    finally:
        await conn.close()
