"""McpManager: every configured MCP server, its status and resources, and a table kept in step
with the tools the connected servers offer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from goat_jupyter.errors import GoatError, InvalidInputError, ToolExecutionError
from goat_jupyter.mcp_client.client import ServerConnection
from goat_jupyter.mcp_client.config import (
    MCP_JSON,
    McpTimeouts,
    ServerConfig,
    load_mcp_config,
    normalise_server_name,
)

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT
    from mcp_types import CallToolResult, ReadResourceResult, Resource

    from goat_jupyter.state import SessionState


class ToolTable(Protocol):
    """Where the servers' tools are offered as `mcp__{server}__{tool}` (tools/registry.py's Registry)."""

    def show_mcp_tools(self, manager: McpManager, conn: ServerConnection) -> None: ...

    def unregister_mcp_tools(self, prefix: str) -> list[str]: ...

    def names(self) -> list[str]: ...


@dataclass
class ServerChanges:
    """What a reload did to the running servers (a changed server is in both lists)."""

    stopped: list[str] = field(default_factory=lambda: list[str]())
    started: list[str] = field(default_factory=lambda: list[str]())

    def text(self) -> str:
        parts = [f"stopped {', '.join(self.stopped)}"] if self.stopped else []
        parts += [f"starting {', '.join(self.started)}"] if self.started else []
        return "MCP servers: " + ("; ".join(parts) or "unchanged") + "."


@dataclass
class ResourceListing:
    """ListMcpResources' answer: (server, resource) pairs, and one line per server that could not be asked."""

    resources: list[tuple[str, Resource]] = field(default_factory=lambda: list[tuple[str, "Resource"]]())
    problems: list[str] = field(default_factory=lambda: list[str]())


class McpManager:
    """Connects servers in the background and keeps a ToolTable in step with their tools."""

    def __init__(
        self,
        workspace: Path,
        settings_servers: Mapping[str, Any] | None = None,
        *,
        timeouts: McpTimeouts | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.timeouts = timeouts or McpTimeouts.from_env(environ)
        self._environ = environ
        self.config = load_mcp_config(workspace, settings_servers, environ)
        self.connections = {name: self._new_connection(name, c) for name, c in self.config.servers.items()}
        self._table: ToolTable | None = None
        self._waited = False
        self._background: set[asyncio.Task[None]] = set()

    def _new_connection(self, name: str, config: ServerConfig) -> ServerConnection:
        return ServerConnection(
            name, config, cwd=self.workspace, timeouts=self.timeouts, listener=self._on_status
        )

    def reconfigure(self, settings_servers: Mapping[str, Any] | None) -> ServerChanges:
        """Read the server list again (`%goat config reload`, a change of folder trust): stop removed or changed servers, start new ones.

        Unchanged servers keep their live connection; new ones start connecting now when a loop runs."""
        self.config = load_mcp_config(self.workspace, settings_servers, self._environ)
        changes = ServerChanges()
        for name, conn in list(self.connections.items()):
            if self.config.servers.get(name) != conn.config:
                del self.connections[name]
                self._spawn(conn.close())
                if self._table is not None:
                    self._table.unregister_mcp_tools(f"mcp__{name}__")
                changes.stopped.append(name)
        for name, config in self.config.servers.items():
            if name not in self.connections:
                self.connections[name] = self._new_connection(name, config)
                changes.started.append(name)
        self._waited = False  # the next turn waits for the new servers, as the first one did
        self.start()
        return changes

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:
            work.close()  # no loop: nothing was started, so there is nothing to stop
            return
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def bind(self, table: ToolTable) -> McpManager:
        """Offer the servers' tools in `table` from now on (a new session brings a new registry)."""
        self._table = table
        for conn in self.connections.values():
            self._on_status(conn)
        return self

    def registry_names(self) -> list[str]:
        return self._table.names() if self._table is not None else []

    def start(self) -> bool:
        """Connect every server not yet started, in background tasks; False without a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        for conn in self.connections.values():
            if conn.status == "pending":
                conn.start()
        return True

    async def wait_ready(
        self, timeout_s: float | None = None, notify: Callable[[str], None] | None = None
    ) -> None:
        """Only the first time: wait up to `timeout_s` for servers still connecting, then go on.

        `notify` gets one line naming the servers waited for, and one naming each that failed.
        """
        self.start()
        if self._waited:
            return
        self._waited = True
        budget = self.timeouts.first_turn_wait_s if timeout_s is None else timeout_s
        connecting = [conn for conn in self.connections.values() if conn.status == "connecting"]
        if connecting and budget > 0:
            if notify is not None:
                names = ", ".join(conn.name for conn in connecting)
                notify(f"Waiting up to {budget:g} s for MCP servers to start: {names}…")
            await _wait_all([conn.wait_settled(None) for conn in connecting], budget)
        if notify is not None:
            self._report_failures(notify)

    def _report_failures(self, notify: Callable[[str], None]) -> None:
        for conn in self.connections.values():
            if conn.status == "failed":
                notify(f"MCP server '{conn.name}' is not available: {conn.error} (going on without it).")
            elif conn.status == "connecting":
                notify(f"MCP server '{conn.name}' is still starting; its tools come once it is ready.")

    def _on_status(self, conn: ServerConnection) -> None:
        table = self._table
        current = self.connections.get(conn.name)
        if table is None or (current is not None and current is not conn):  # replaced by a reload
            return
        if conn.status == "connected":
            table.show_mcp_tools(self, conn)
        elif conn.status == "disconnected" or (conn.status == "failed" and not conn.lost):
            table.unregister_mcp_tools(f"mcp__{conn.name}__")

    def _connection(self, server: str) -> ServerConnection:
        name = normalise_server_name(server)
        conn = self.connections.get(name)
        if conn is not None:
            return conn
        if name in self.config.errors:
            raise ToolExecutionError(f"The MCP server '{name}' has an {self.config.errors[name]}")
        if not self.connections:
            raise InvalidInputError(
                f"No MCP servers are configured (add them to {MCP_JSON} in {self.workspace})."
            )
        known = ", ".join(self.connections)
        raise InvalidInputError(f"There is no MCP server named '{server}'. Configured servers: {known}.")

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], progress: ProgressFnT | None = None
    ) -> CallToolResult:
        """Run the server's tool named `tool` (its own name); failures raise GoatErrors."""
        return await self._connection(server).call_tool(tool, arguments, progress)

    async def list_resources(self, server: str | None = None) -> ResourceListing:
        """Resources of one server, or of every connected server (failures listed, not fatal)."""
        targets = [self._connection(server)] if server else list(self.connections.values())
        listing = ResourceListing()
        for conn in targets:
            if server is None and conn.status != "connected":
                if conn.status == "failed":
                    listing.problems.append(f"Server '{conn.name}' is not connected: {conn.error}")
                continue
            try:
                resources = await conn.list_resources()
            except GoatError as exc:
                if server is not None:
                    raise
                listing.problems.append(exc.message)
                continue
            listing.resources.extend((conn.name, resource) for resource in resources)
        return listing

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        return await self._connection(server).read_resource(uri)

    async def disconnect(self, server: str) -> None:
        """Stop one server; its tools leave the registry."""
        await self._connection(server).close()

    async def reconnect(self, servers: Sequence[str] = ()) -> None:
        """Restart the named servers, or every one that is not connected."""
        conns = [self._connection(name) for name in servers] or [
            conn for conn in self.connections.values() if conn.status != "connected"
        ]
        for conn in conns:
            await conn.close()
            conn.start()

    async def close(self) -> None:
        await asyncio.gather(*(conn.close() for conn in self.connections.values()))

    def command(self, args: Sequence[str]) -> str:
        """`%goat mcp [reconnect [server ...]]`: the status text, or schedule a reconnect."""
        from goat_jupyter.mcp_client.status import status_text

        if args and args[0] == "reconnect":
            try:
                loop = asyncio.get_running_loop()
                names = [self._connection(name).name for name in args[1:]]
            except (RuntimeError, GoatError) as exc:
                return exc.message if isinstance(exc, GoatError) else "No event loop is running."
            task = loop.create_task(self.reconnect(names))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return f"Reconnecting {', '.join(names) or 'the servers that are not connected'}; see %goat mcp."
        if args and args[0] not in ("list", "status"):
            return "Usage: %goat mcp [list | reconnect [server ...]]"
        return status_text(self)


async def _wait_all(waits: Sequence[Awaitable[bool]], timeout_s: float) -> None:
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout_s)
    finally:
        for task in tasks:
            task.cancel()


def attach_mcp(current: object, table: ToolTable, session: SessionState) -> McpManager:
    """The runtime's manager (created on first use, kept across sessions), bound to `table`."""
    if not isinstance(current, McpManager):
        current = McpManager(session.workspace, session.settings.mcp_servers)
    return current.bind(table)
