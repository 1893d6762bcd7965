"""A real HTTP server on 127.0.0.1 for the web tests: fixed routes, every request recorded."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@dataclass
class Reply:
    """What a route answers; `body` may be an iterable of chunks (streamed, no Content-Length)."""

    status: int = 200
    body: bytes | Iterable[bytes] = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    delay_s: float = 0.0
    sent: int = 0  # bytes actually written, filled in while serving


@dataclass
class SeenRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode())


Route = Reply | Callable[[SeenRequest], Reply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: LocalSite


class LocalSite:
    """Serve `routes` (path -> Reply or a function of the request) until stopped."""

    def __init__(self, routes: Mapping[str, Route]) -> None:
        self.routes: dict[str, Route] = dict(routes)
        self.requests: list[SeenRequest] = []
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.site = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def hits(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)

    def __enter__(self) -> LocalSite:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def closed_port_url(path: str = "/") -> str:
    """A loopback URL where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _serve(self) -> None:
        site = cast(_Server, self.server).site
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        seen = SeenRequest(
            self.command,
            parts.path,
            parse_qs(parts.query),
            dict(self.headers.items()),
            self.rfile.read(length),
        )
        site.requests.append(seen)
        route = site.routes.get(parts.path)
        reply = (
            Reply(404, b"<h1>Not Found</h1>") if route is None else route(seen) if callable(route) else route
        )
        time.sleep(reply.delay_s)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._write(reply)

    def _write(self, reply: Reply) -> None:
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if isinstance(reply.body, bytes):
            self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        chunks = [reply.body] if isinstance(reply.body, bytes) else reply.body
        for chunk in chunks:
            self.wfile.write(chunk)
            reply.sent += len(chunk)

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()
