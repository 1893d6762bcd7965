"""One tornado request handed to an ASGI app (the MCP SDK's Streamable HTTP session manager), its
response streamed back through the handler: the MCP endpoint lives inside the Jupyter server, behind
its auth, and nothing else listens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from tornado.iostream import StreamClosedError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Responder(Protocol):
    """The tornado handler's side, as far as the bridge uses it."""

    def set_status(self, status_code: int) -> None: ...

    def add_header(self, name: str, value: str) -> None: ...

    def clear_header(self, name: str) -> None: ...

    def write(self, chunk: bytes) -> None: ...

    def flush(self) -> Awaitable[None]: ...


def scope_of(method: str, path: str, query: str, headers: list[tuple[str, str]], client: str) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": (client, 0),
        "server": ("127.0.0.1", 0),
    }


async def serve(app: AsgiApp, scope: Scope, body: bytes, out: Responder, gone: asyncio.Event) -> None:
    """Run the app for one request; `gone` is set when the client disconnects (ends an SSE stream)."""
    sent_body = False

    async def receive() -> Message:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            out.set_status(int(message["status"]))
            out.clear_header("Content-Type")
            for name, value in message.get("headers", []):
                out.add_header(bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
        elif message["type"] == "http.response.body" and not gone.is_set():
            chunk = bytes(message.get("body", b""))
            try:
                if chunk:
                    out.write(chunk)
                await out.flush()
            except StreamClosedError:  # the client went away (an SSE stream it closed)
                gone.set()

    await app(scope, receive, send)
