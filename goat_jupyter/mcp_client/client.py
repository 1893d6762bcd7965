"""One MCP server connection, owned by a background task (the SDK's context managers must be
entered and exited in the same task); calls come from any task and reconnect after a crash."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from goat_jupyter.errors import GoatError, ToolExecutionError, ToolTimeoutError
from goat_jupyter.mcp_client.config import McpTimeouts, ServerConfig
from goat_jupyter.mcp_client.tool_changes import ToolChangeFollower
from goat_jupyter.mcp_client.transport import import_sdk, open_client

if TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT
    from mcp_types import CallToolResult, ReadResourceResult, Resource, Tool

Status = Literal["pending", "connecting", "connected", "failed", "disconnected"]
T = TypeVar("T")
STDERR_TAIL_CHARS = 1500
STOP_GRACE_S = 10.0
_log = logging.getLogger(__name__)


def describe_exception(exc: BaseException) -> str:
    """The innermost useful message, unwrapping anyio's exception groups."""
    inner: list[BaseException] = list(getattr(exc, "exceptions", None) or [])
    while inner:
        exc = inner[0]
        inner = list(getattr(exc, "exceptions", None) or [])
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


class ServerConnection:
    """Connect, list tools, serve calls, and notice a dead server; `listener` hears status changes."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        cwd: Path,
        timeouts: McpTimeouts,
        listener: Callable[[ServerConnection], None] = lambda _conn: None,
    ) -> None:
        self.name = name
        self.config = config
        self.cwd = cwd
        self.timeouts = timeouts
        self.listener = listener
        self.status: Status = "pending"
        self.error = ""
        self.lost = False  # the connection died under us; reconnect on the next call
        self.tools: list[Tool] = []
        self.has_resources = False
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: Any = None  # anyio.CancelScope around the whole connection
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._lock: asyncio.Lock | None = None
        self._closing = False

    @property
    def transport(self) -> str:
        return self.config.type

    def start(self) -> None:
        """Begin connecting in a background task; no-op while a connection is live or under way."""
        if self._task is not None and not self._task.done():
            return
        self._set("connecting", "")
        self._closing = False
        self._scope = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._own(), name=f"goat-mcp-{self.name}")

    async def wait_settled(self, timeout_s: float | None) -> bool:
        """Wait until connecting has ended either way; False if it is still under way."""
        if self._task is None:
            return True
        try:
            await asyncio.wait_for(self._settled.wait(), timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    async def _own(self) -> None:
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            try:
                await asyncio.to_thread(import_sdk)  # about a second of imports, off the event loop
                if not self._closing:
                    await self._serve(errlog)
            finally:
                self._client = None
                if self._closing or self.status in ("connecting", "connected"):
                    self._set("disconnected", "")
                self._settled.set()

    async def _serve(self, errlog: Any) -> None:
        """Connect within the connect timeout, publish the tools, then hold the connection open."""
        import anyio

        connected = False
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                scope.deadline = anyio.current_time() + self.timeouts.connect_s
                async with AsyncExitStack() as stack:
                    changes = ToolChangeFollower(self._refresh_tools)
                    client = await open_client(
                        self.config, stack, self.cwd, errlog, self.timeouts, changes.on_message
                    )
                    tools = await _list_tools(client)
                    scope.deadline = math.inf
                    self._connected(client, tools)
                    connected = True
                    await _until(self._stop, changes.follow(client))
            if scope.cancelled_caught and not self._closing:
                self._fail(f"did not connect within {self.timeouts.connect_s:g} s", errlog)
        except Exception as exc:
            if connected:
                self._mark_lost(describe_exception(exc))
            else:
                self._fail(describe_exception(exc), errlog)

    async def _refresh_tools(self) -> None:
        """The server changed its tools: list them again; the listener re-registers them."""
        client = self._client
        if client is None:
            return
        try:
            tools = await self._guarded(
                "listing its changed tools", self.timeouts.request_s, _list_tools(client)
            )
        except GoatError as exc:  # keep the old list; a lost connection reconnects on the next call
            _log.debug("MCP server %s: %s", self.name, exc)
            return
        self.tools = tools
        self._set("connected", "")

    def _connected(self, client: Client, tools: list[Tool]) -> None:
        self._client, self.tools = client, tools
        self.lost = False
        self.has_resources = client.server_capabilities.resources is not None
        self._set("connected", "")
        self._settled.set()

    def _fail(self, reason: str, errlog: Any) -> None:
        """Connecting failed; a server that was lost keeps its tools so the next call tries again."""
        if self._closing:
            return
        tail = _stderr_tail(errlog)
        prefix = "connection lost and reconnecting failed: " if self.lost else ""
        detail = f"\nserver stderr (last lines):\n{tail}" if tail else ""
        self._set("failed", prefix + reason + detail)

    def _set(self, status: Status, error: str) -> None:
        self.status, self.error = status, error
        self.listener(self)

    async def close(self) -> None:
        """Disconnect for good (until `start`); waits, within bounds, for the server to stop."""
        self._closing = True
        self.lost = False
        self._stop.set()
        if self.status == "connecting" and self._scope is not None:
            self._scope.cancel()
        await self._wait_task_end()
        self._set("disconnected", "")

    async def _wait_task_end(self) -> None:
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE_S)

    def _mark_lost(self, reason: str) -> None:
        """The server died or hung up: report it and tear down; the next call reconnects."""
        if self.lost or self._closing:
            return
        self.lost = True
        self._set("failed", f"connection lost ({reason}); it reconnects on the next call")
        self._stop.set()

    async def client(self) -> Client:
        """The live SDK client: waits for a connection under way, reconnects a lost or failed one."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.status != "connecting" and (self._client is None or self.status != "connected"):
                await self._wait_task_end()
                self.start()
            await self._settled.wait()
        if self._client is None or self.status != "connected":
            raise ToolExecutionError(f"The MCP server '{self.name}' is not connected: {self.error}")
        return self._client

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], progress: ProgressFnT | None = None
    ) -> CallToolResult:
        client = await self.client()
        timeout = self.timeouts.call_s
        request = client.call_tool(tool, arguments, read_timeout_seconds=timeout, progress_callback=progress)
        return await self._guarded(f"the tool {tool}", timeout, request)

    async def list_resources(self) -> list[Resource]:
        """The server's resources; none when it does not offer the resources capability."""
        client = await self.client()
        if not self.has_resources:
            return []
        return await self._guarded("listing resources", self.timeouts.request_s, _list_resources(client))

    async def read_resource(self, uri: str) -> ReadResourceResult:
        client = await self.client()
        return await self._guarded(f"reading {uri}", self.timeouts.request_s, client.read_resource(uri))

    async def _guarded(self, what: str, timeout_s: float, request: Awaitable[T]) -> T:
        """Await an SDK request, turning its failures into GoatErrors; a dead connection is marked lost."""
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        try:
            return await request
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolTimeoutError(
                    f"The MCP server '{self.name}' did not answer {what} within {timeout_s:g} s; "
                    "the request was abandoned (the server stays connected)."
                ) from None
            if exc.code == CONNECTION_CLOSED:
                self._mark_lost("the server closed the connection")
                raise ToolExecutionError(
                    f"The MCP server '{self.name}' closed the connection during {what} (it may have "
                    "crashed). It will be restarted on the next call."
                ) from None
            raise ToolExecutionError(f"The MCP server '{self.name}' rejected {what}: {exc}") from None
        except (RuntimeError, ValueError) as exc:  # the SDK's result validation (schema, pydantic)
            raise ToolExecutionError(
                f"The MCP server '{self.name}' gave an unusable answer to {what}: {exc}"
            ) from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream) as exc:
            self._mark_lost(describe_exception(exc))
            raise ToolExecutionError(
                f"The connection to the MCP server '{self.name}' failed during {what}: "
                f"{describe_exception(exc)}. It will be reconnected on the next call."
            ) from None


async def _list_resources(client: Client) -> list[Resource]:
    resources: list[Resource] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            return resources


async def _until(stop: asyncio.Event, work: Awaitable[None]) -> None:
    """Wait for `stop` while `work` runs alongside; `work` is cancelled when `stop` is set."""
    task = asyncio.ensure_future(work)
    try:
        await stop.wait()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _list_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _stderr_tail(errlog: Any) -> str:
    """The end of what the server wrote to stderr (read without moving the shared file offset)."""
    try:
        errlog.flush()
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - STDERR_TAIL_CHARS)
        data = os.pread(fd, size - start, start)
    except (OSError, ValueError):
        return ""
    return data.decode("utf-8", errors="replace").strip()
