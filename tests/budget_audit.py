"""An auditing HTTP proxy in front of the replay server: it sees every model request goat sends (when
it arrived, when its answer ended, its max_tokens, its billed usage), so a test can check what the
provider could have charged at any moment against a budget. Real HTTP end to end; nothing mocked."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from goat_jupyter.agent.context import request_tokens
from goat_jupyter.agent.spend import Prices

GPT_4O_MINI = "openai/gpt-4o-mini"
PRICES = Prices(prompt=0.15e-6, answer=0.6e-6)  # litellm's map for gpt-4o-mini


@dataclass
class Seen:
    """One request as the provider saw it."""

    body: dict[str, Any]
    arrived: float
    ended: float = float("inf")  # the answer's last byte went out (or the client went away)
    status: int = 0
    prompt_tokens: int = 0  # billed, from the stream's usage chunk
    completion_tokens: int = 0

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_tokens")
        return value if isinstance(value, int) else None

    def worst(self, prices: Prices = PRICES) -> float:
        """The most this request could cost: its prompt plus a full answer (infinite without a cap)."""
        if self.max_tokens is None:
            return float("inf")
        prompt = max(
            request_tokens(self.body.get("messages", []), self.body.get("tools", [])), self.prompt_tokens
        )
        return prompt * prices.prompt + self.max_tokens * prices.answer

    def billed(self, prices: Prices = PRICES) -> float:
        return self.prompt_tokens * prices.prompt + self.completion_tokens * prices.answer

    def text(self) -> str:
        return json.dumps(self.body.get("messages", []))


class AuditProxy:
    """Forwards /v1/chat/completions to `upstream` (a ReplayServer's url) and keeps a Seen per request."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.upstream.path}"

    def __enter__(self) -> AuditProxy:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def with_marker(self, marker: str) -> list[Seen]:
        return [seen for seen in self.seen if marker in seen.text()]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen = Seen(json.loads(raw), time.monotonic())
                with proxy.lock:
                    proxy.seen.append(seen)
                try:
                    proxy.forward(self, raw, seen)
                finally:
                    seen.ended = time.monotonic()

        return Handler

    def forward(self, handler: BaseHTTPRequestHandler, raw: bytes, seen: Seen) -> None:
        upstream = http.client.HTTPConnection(self.upstream.hostname or "127.0.0.1", self.upstream.port)
        headers = {
            "Content-Type": "application/json",
            "Authorization": handler.headers.get("Authorization", ""),
        }
        upstream.request("POST", handler.path, raw, headers)
        response = upstream.getresponse()
        seen.status = response.status
        handler.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                handler.send_header(name, value)
        handler.send_header("Connection", "close")
        handler.end_headers()
        body = b""
        try:
            while chunk := response.read1(65536):
                body += chunk
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (an interrupt)
            pass
        finally:
            upstream.close()
        _note_usage(body, seen)


def _note_usage(body: bytes, seen: Seen) -> None:
    for line in body.decode("utf-8", "replace").splitlines():
        if not line.startswith("data: {"):
            continue
        usage = json.loads(line[len("data: ") :]).get("usage")
        if isinstance(usage, dict):
            seen.prompt_tokens = int(usage.get("prompt_tokens") or 0)
            seen.completion_tokens = int(usage.get("completion_tokens") or 0)


def worst_moment(seen: list[Seen], prices: Prices = PRICES) -> float:
    """The most the provider could have charged at any moment: when each request arrived, what the
    finished ones billed plus the worst case of every one still in flight (that one included)."""
    worst = 0.0
    for request in seen:
        at = request.arrived
        finished = sum(q.billed(prices) for q in seen if q.ended <= at)
        open_now = sum(q.worst(prices) for q in seen if q.arrived <= at < q.ended)
        worst = max(worst, finished + open_now)
    return worst


def peak_in_flight(seen: list[Seen]) -> int:
    return max((sum(1 for q in seen if q.arrived <= r.arrived < q.ended) for r in seen), default=0)
