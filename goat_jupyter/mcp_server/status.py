"""What the settings panel shows about serving MCP: on or off and why, the connect commands for
Claude Code, Codex and VS Code, and the clients connected with what each did."""

from __future__ import annotations

import json
from typing import Any

from goat_jupyter.mcp_server.gate import Gate
from goat_jupyter.mcp_server.service import OutsideCalls

SERVER_NAME = "jupyter"
RECENT_CALLS = 20


def connect_commands(url: str, token: str) -> dict[str, str]:
    """How each client is told about this server (the token is the Jupyter server's own)."""
    header = f"Authorization: token {token}"
    vscode = {
        "servers": {SERVER_NAME: {"type": "http", "url": url, "headers": {"Authorization": f"token {token}"}}}
    }
    return {
        "claude_code": f'claude mcp add --transport http {SERVER_NAME} {url} --header "{header}"',
        "codex": (
            f'[mcp_servers.{SERVER_NAME}]\nurl = "{url}"\n'
            f'http_headers = {{ "Authorization" = "token {token}" }}'
        ),
        "vscode": json.dumps(vscode, indent=2),
    }


def status_view(
    decided: Gate, url: str, calls: OutsideCalls | None, token: str = "<token>"
) -> dict[str, Any]:
    clients = (
        []
        if calls is None
        else [
            {"client": c.client, "calls": len(c.calls), "recent": c.calls[-RECENT_CALLS:]}
            for c in calls.clients.values()
        ]
    )
    page = calls is not None and calls.tabs.connected
    return {
        "enabled": decided.enabled,
        "reason": decided.reason,
        "url": url,
        "commands": connect_commands(url, token) if decided.enabled else {},
        "clients": clients,
        "page_connected": page,
    }
