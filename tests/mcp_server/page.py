"""A JupyterLab page as goat's MCP server sees it: the websocket /goat/mcp/tab, answered by the
in-memory stand-in for the labextension (tests/notebook_frontend.py), approvals answered as told."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, Literal

from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from tests.notebook_frontend import FakeNotebookFrontend
from tests.server_harness import TOKEN, JupyterServer

Choice = Literal["allow_once", "allow_session", "deny", "silent"]


class Page:
    def __init__(self, frontend: FakeNotebookFrontend) -> None:
        self.frontend = frontend
        self.choice: Choice = "deny"
        self.approvals: list[dict[str, Any]] = []

    def answer(self, request: dict[str, Any]) -> dict[str, Any] | None:
        if request.get("op") != "mcp_approval":
            return self.frontend.answer(request)
        self.approvals.append(request)
        if self.choice == "silent":
            return None
        return {"id": request["id"], "ok": True, "choice": self.choice}

    async def serve(self, socket: WebSocketClientConnection) -> None:
        while (text := await socket.read_message()) is not None:
            reply = self.answer(json.loads(text))
            if reply is not None:
                await socket.write_message(json.dumps(reply))


@asynccontextmanager
async def connected_page(server: JupyterServer, frontend: FakeNotebookFrontend) -> AsyncIterator[Page]:
    url = server.url.replace("http://", "ws://") + f"/goat/mcp/tab?token={TOKEN}"
    socket = await websocket_connect(HTTPRequest(url, connect_timeout=90, request_timeout=90))
    page = Page(frontend)
    serving = asyncio.ensure_future(page.serve(socket))
    try:
        yield page
    finally:
        socket.close()
        serving.cancel()
        with suppress(asyncio.CancelledError):
            await serving
