"""A kernel behind a Jupyter server, driven the way JupyterLab drives it: REST to start a session,
the kernel's websocket (`/api/kernels/<id>/channels`) for execute requests, iopub and comms.

`goat.notebook` comms are answered by a FakeNotebookFrontend, so the comm bridge runs over the
server's websocket (and, with `--gateway-url`, over the gateway's websocket behind it)."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from goat_jupyter.live.comm_bridge import COMM_TARGET
from tests.kernel_harness import CellResult, Message
from tests.notebook_frontend import FakeNotebookFrontend
from tests.server_harness import JupyterServer


def _message(msg_type: str, content: dict[str, Any], channel: str, session: str, **extra: Any) -> Message:
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": msg_type,
        "session": session,
        "username": "goat-test",
        "date": datetime.now(timezone.utc).isoformat(),
        "version": "5.3",
    }
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": channel}
    return {**message, **extra}


@dataclass
class RemoteKernel:
    """One notebook session on `server`; its comms go to `frontend` (when given)."""

    server: JupyterServer
    ws: WebSocketClientConnection
    kernel_id: str
    token: str
    frontend: FakeNotebookFrontend | None = None
    session: str = field(default_factory=lambda: uuid.uuid4().hex)
    iopub: list[Message] = field(default_factory=lambda: list[Message]())
    replies: dict[str, Message] = field(default_factory=lambda: dict[str, Message]())

    async def execute(
        self, code: str, *, timeout: float = 120, metadata: dict[str, Any] | None = None
    ) -> CellResult:
        """Run `code`; returns when the kernel is idle again and the reply came (TimeoutError otherwise)."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        request = _message("execute_request", content, "shell", self.session, metadata=metadata or {})
        msg_id = request["header"]["msg_id"]
        self.ws.write_message(json.dumps(request))
        await asyncio.wait_for(self._pump_until(msg_id), timeout)
        mine = [m for m in self.iopub if m["parent_header"].get("msg_id") == msg_id]
        reply = self.replies[msg_id]
        return CellResult(
            reply["content"]["status"], mine, execution_count=reply["content"].get("execution_count")
        )

    async def _pump_until(self, msg_id: str) -> None:
        while not (msg_id in self.replies and self._idle(msg_id)):
            raw = await self.ws.read_message()
            if raw is None:
                raise ConnectionError("the kernel websocket closed")
            self._dispatch(json.loads(raw))

    def _idle(self, msg_id: str) -> bool:
        return any(
            m["header"]["msg_type"] == "status"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"]["execution_state"] == "idle"
            for m in self.iopub
        )

    def _dispatch(self, msg: Message) -> None:
        if msg.get("channel") == "shell":
            self.replies[msg["parent_header"].get("msg_id", "")] = msg
        elif msg.get("channel") == "iopub":
            self.iopub.append(msg)
            self._on_comm(msg)

    def _on_comm(self, msg: Message) -> None:
        kind, content = msg["header"]["msg_type"], msg["content"]
        if self.frontend is None or kind not in ("comm_open", "comm_msg"):
            return
        if kind == "comm_open" and content.get("target_name") != COMM_TARGET:
            return
        if kind == "comm_open":
            self.frontend.opened.append(msg)
            if self.frontend.mode == "close":
                self._send_comm("comm_close", {"comm_id": content["comm_id"], "data": {}})
        elif self.frontend.mode in ("answer", "ack"):
            answer = self.frontend.answer(content["data"])
            self._send_comm("comm_msg", {"comm_id": content["comm_id"], "data": answer})

    def _send_comm(self, kind: str, content: dict[str, Any]) -> None:
        self.ws.write_message(json.dumps(_message(kind, content, "shell", self.session)))

    def close(self) -> None:
        self.ws.close()


async def open_notebook(
    server: JupyterServer, path: str, token: str, frontend: FakeNotebookFrontend | None = None
) -> RemoteKernel:
    """What opening `path` in JupyterLab does: POST /api/sessions, then connect the kernel's websocket."""
    body = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
    reply = await asyncio.to_thread(server.request, "POST", "/api/sessions", body, token=token)
    assert reply.status == 201, (reply.status, reply.raw)
    kernel_id = reply.body["kernel"]["id"]
    session = uuid.uuid4().hex
    url = server.url.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels?session_id={session}"
    request = HTTPRequest(
        url, headers={"Authorization": f"token {token}"}, connect_timeout=30, request_timeout=30
    )
    ws = await asyncio.wait_for(websocket_connect(request), 60)
    return RemoteKernel(server, ws, kernel_id, token, frontend, session)
