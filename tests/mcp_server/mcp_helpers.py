"""A real MCP client (the SDK's) against a real Jupyter server with goat's extension."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from tests.server_harness import TOKEN, JupyterServer


def turn_on(home: Path) -> None:
    """The user's own switch: ~/.goat/settings.json."""
    goat = home / ".goat"
    goat.mkdir(parents=True, exist_ok=True)
    (goat / "settings.json").write_text(json.dumps({"mcp_server": {"enabled": True}}))


@asynccontextmanager
async def mcp_client(
    server: JupyterServer, name: str = "test-agent", token: str = TOKEN
) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"token {token}"}, timeout=httpx2.Timeout(30, read=120)
    )
    async with http, streamable_http_client(f"{server.url}/goat/mcp", http_client=http) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, client_info=Implementation(name=name, version="1")) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await session.call_tool(tool, args)
    text = "\n".join(str(getattr(part, "text", "")) for part in result.content)
    return bool(result.is_error), text


def notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return {"cells": list(cells), "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}


def code(cell_id: str, source: str, tags: tuple[str, ...] = ()) -> dict[str, Any]:
    metadata: dict[str, Any] = {"tags": list(tags)} if tags else {}
    return {"cell_type": "code", "id": cell_id, "metadata": metadata, "source": source, "outputs": [],
            "execution_count": None}  # fmt: skip


def start_kernel(server: JupyterServer, path: str) -> str:
    """What opening the notebook in JupyterLab does on the server: a session with a kernel."""
    body = {"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}}
    reply = server.request("POST", "/api/sessions", body)
    assert reply.status == 201, reply.raw
    return str(reply.body["kernel"]["id"])


def user_settings(server: JupyterServer, **settings: Any) -> None:
    """~/.goat/settings.json with serving on plus `settings`."""
    goat = server.home / ".goat"
    goat.mkdir(parents=True, exist_ok=True)
    (goat / "settings.json").write_text(json.dumps({"mcp_server": {"enabled": True}, **settings}))
