"""Open one MCP connection with the official SDK: stdio, streamable HTTP or SSE."""

from __future__ import annotations

import importlib
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goat_jupyter.mcp_client.config import McpTimeouts, ServerConfig, StdioServerConfig

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client import Transport
    from mcp.client.session import MessageHandlerFnT


def import_sdk() -> None:
    """The SDK, and jsonschema that it imports on the first call that returns structured content."""
    for module in ("anyio", "mcp", "mcp.client.stdio", "mcp.client.streamable_http", "jsonschema"):
        importlib.import_module(module)


async def open_client(
    config: ServerConfig,
    stack: AsyncExitStack,
    cwd: Path,
    errlog: Any,
    timeouts: McpTimeouts,
    message_handler: MessageHandlerFnT | None = None,
) -> Client:
    """Enter the transport and the SDK client on `stack` (in the calling task) and return the client."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_types import Implementation

    from goat_jupyter.version import __version__

    if isinstance(config, StdioServerConfig):
        workdir = cwd / config.cwd if config.cwd else cwd  # a relative cwd is taken from the workspace
        params = StdioServerParameters(
            command=config.command, args=config.args, env=config.env or None, cwd=workdir
        )
        transport: Transport = stdio_client(params, errlog=errlog)
    elif config.type == "sse":
        from mcp.client.sse import sse_client

        transport = sse_client(config.url, headers=config.headers or None, timeout=timeouts.connect_s)
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(
            headers=config.headers, timeout=httpx2.Timeout(timeouts.connect_s, read=300.0)
        )
        await stack.enter_async_context(http)
        transport = streamable_http_client(config.url, http_client=http)
    info = Implementation(name="goat_jupyter", version=__version__)
    client = Client(
        transport,
        client_info=info,
        read_timeout_seconds=timeouts.request_s,
        message_handler=message_handler,
    )
    return await stack.enter_async_context(client)
