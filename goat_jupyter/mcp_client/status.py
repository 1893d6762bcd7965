"""The `%goat mcp` report: each server's transport, status (with its error) and tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from goat_jupyter.mcp_client.config import MCP_JSON, McpConfig, McpTimeouts, StdioServerConfig

if TYPE_CHECKING:
    from pathlib import Path

    from goat_jupyter.mcp_client.client import ServerConnection


class ManagerView(Protocol):
    """What the report reads of mcp/manager.py's McpManager."""

    @property
    def workspace(self) -> Path: ...
    @property
    def timeouts(self) -> McpTimeouts: ...
    @property
    def config(self) -> McpConfig: ...
    @property
    def connections(self) -> dict[str, ServerConnection]: ...
    def registry_names(self) -> list[str]: ...


def _target(conn: ServerConnection) -> str:
    config = conn.config
    if isinstance(config, StdioServerConfig):
        return " ".join([config.command, *config.args])
    return config.url


def _server_lines(manager: ManagerView, conn: ServerConnection) -> list[str]:
    source = manager.config.sources.get(conn.name, "")
    lines = [f"{conn.name}  [{conn.transport}, {source}]  {conn.status}  ({_target(conn)})"]
    if conn.error:
        lines.extend("    " + line for line in conn.error.splitlines())
    names = [name for name in manager.registry_names() if name.startswith(f"mcp__{conn.name}__")]
    if names:
        lines.append(f"    {len(names)} tools: " + ", ".join(names))
    return lines


def status_text(manager: ManagerView) -> str:
    """Every configured server, then entries that could not be used and file problems."""
    untrusted = manager.config.untrusted
    if untrusted:
        note = f"Not started, not approved for this folder (`%goat trust` shows and approves them): {', '.join(untrusted)}."
    else:
        note = ""
    if not manager.connections and not manager.config.errors and not manager.config.problems:
        if note:
            return note
        return (
            f"No MCP servers are configured. Add them to {MCP_JSON} in {manager.workspace} "
            "(Claude Code's format) or to mcpServers in .goat/settings.json."
        )
    lines = ["MCP servers:"] if manager.connections else []
    for conn in manager.connections.values():
        lines.extend("  " + line for line in _server_lines(manager, conn))
    for name, error in manager.config.errors.items():
        lines.append(f"  {name}  failed  ({error})")
    lines.extend(manager.config.problems)
    if note:
        lines.append(note)
    timeouts = manager.timeouts
    lines.append(
        f"Timeouts: connect {timeouts.connect_s:g} s, tool calls {timeouts.call_s:g} s, "
        f"first-turn wait {timeouts.first_turn_wait_s:g} s."
    )
    return "\n".join(lines)
