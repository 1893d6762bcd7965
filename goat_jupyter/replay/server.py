"""A stdlib OpenAI-compatible chat-completions server on 127.0.0.1 that plays scripted turns.

It runs in a daemon thread (so it can live inside a Jupyter kernel without touching its asyncio
loop) or as a process (`python -m goat_jupyter.replay`). See `cassette.py` for the turn format.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

from goat_jupyter.replay.anthropic_wire import PromptCache, anthropic_error, message_events, message_json
from goat_jupyter.replay.cassette import AnyTurn, CassetteLike, ErrorTurn, to_cassette
from goat_jupyter.replay.player import NoTurnError, ScriptPlayer, TurnSource, last_user_text
from goat_jupyter.replay.wire import (
    Reply,
    completion_json,
    error_json,
    estimate_tokens,
    sse_event,
    stream_chunks,
    wire_json,
)
from goat_jupyter.text import loads_json

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MESSAGES_PATHS = ("/v1/messages", "/messages", "/v1/v1/messages")  # Anthropic's Messages API
DEFAULT_MODEL = "replay"


class _HTTPServer(ThreadingHTTPServer):
    """Keeps a back reference to the ReplayServer and tracks open client sockets."""

    daemon_threads = True
    replay: ReplayServer
    open_sockets: set[socket.socket]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients dropping a kept-alive connection is normal; other errors still print."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class ReplayServer:
    """Serve `/v1/chat/completions` from a script, a cassette file or a TurnSource."""

    def __init__(
        self,
        script: CassetteLike = (),
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        source: TurnSource | None = None,
        log: Callable[[str], None] | None = None,
        context_limit: int | None = None,
    ) -> None:
        self.source: TurnSource = source or ScriptPlayer(to_cassette(script))
        # Refuse (HTTP 400, like the providers) any request estimated above this many tokens.
        self.context_limit = context_limit
        self.prompt_cache = PromptCache()
        self.stopping = threading.Event()  # wakes handlers that are stalling on purpose
        self.host, self.port = host, port
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []  # time.monotonic() of each request, for timing tests
        self.stall_times: list[float] = []  # when each scripted stall began (the last chunk was sent)
        self.log = log
        self._httpd: _HTTPServer | None = None
        self._url: str | None = None  # kept after stop() for messages and assertions
        self._thread: threading.Thread | None = None
        self._sockets_lock = threading.Lock()
        self._on_stop: list[Callable[[], None]] = []

    @property
    def remaining(self) -> list[AnyTurn]:
        """Turns not played yet (empty when recording)."""
        return self.source.remaining

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients, e.g. `http://127.0.0.1:PORT/v1`."""
        if self._url is None:
            raise RuntimeError("ReplayServer is not started; call start() first.")
        return self._url

    @property
    def model(self) -> str | None:
        return self.source.model

    def __repr__(self) -> str:
        where = self._url if self._httpd is not None else "stopped" if self._url else "not started"
        return f"<ReplayServer {where}, {len(self.remaining)} turn(s) left, {len(self.requests)} request(s)>"

    def start(self) -> str:
        """Bind, serve in a daemon thread, and return the base URL."""
        if self._httpd is not None:
            return self.url
        self.stopping.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.replay, httpd.open_sockets = self, set()
        self._httpd, self.port = httpd, httpd.server_address[1]
        self._url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="goat-replay", daemon=True
        )
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and drop open connections so no client or thread is left waiting."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._sockets_lock:
            for sock in list(httpd.open_sockets):
                _shutdown_quietly(sock)
        if self._thread is not None:
            self._thread.join(timeout=5)
        for callback in self._on_stop:
            callback()
        self._on_stop.clear()

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Run `callback` once when the server stops (used to restore environment variables)."""
        self._on_stop.append(callback)

    def __enter__(self) -> ReplayServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def track_connection(self, sock: socket.socket, *, add: bool) -> None:
        """Remember open client sockets so stop() can close idle keep-alive connections."""
        httpd = self._httpd
        if httpd is None:
            return
        with self._sockets_lock:
            (httpd.open_sockets.add if add else httpd.open_sockets.discard)(sock)

    def note(self, text: str) -> None:
        """Log one line about a request when a logger was given (the CLI logs to stderr)."""
        if self.log is not None:
            self.log(text)


def _shutdown_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """One client connection; HTTP/1.1 so streams are chunked and a cut is visible to clients."""

    protocol_version = "HTTP/1.1"
    server_version = "GoatReplay/1"
    disable_nagle_algorithm = True  # small SSE writes would otherwise wait ~40 ms for delayed ACKs

    @property
    def replay(self) -> ReplayServer:
        return cast(_HTTPServer, self.server).replay

    def setup(self) -> None:
        super().setup()
        self.replay.track_connection(self.connection, add=True)

    def finish(self) -> None:
        self.replay.track_connection(self.connection, add=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/health":
            body = {
                "status": "ok",
                "remaining": len(self.replay.remaining),
                "requests": len(self.replay.requests),
            }
            self._send_json(200, body)
        elif path in ("/v1/models", "/models"):
            names = dict.fromkeys([self.replay.model or DEFAULT_MODEL, DEFAULT_MODEL])
            data = [{"id": n, "object": "model", "created": 0, "owned_by": "goat-replay"} for n in names]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, error_json(404, f"goat replay: no such endpoint GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in MESSAGES_PATHS:
            self._messages_api()
            return
        if path not in CHAT_PATHS:
            self._send_json(404, error_json(404, f"goat replay: no such endpoint POST {path}"))
            return
        try:
            request = self._read_json()
        except ValueError as exc:
            self._send_json(400, error_json(400, f"goat replay: request body is not JSON: {exc}"))
            return
        self.replay.requests.append(request)
        self.replay.request_times.append(time.monotonic())
        if self._too_long(request):
            return
        try:
            picked = self.replay.source.pick(request)
        except NoTurnError as exc:
            self.replay.note(str(exc))
            self._send_json(400, error_json(400, str(exc), code="replay_no_turn"))
            return
        user_text = last_user_text(request.get("messages"))[:80]
        self.replay.note(f"turn {picked.index} answered (last user message: {user_text!r})")
        self._answer(picked.turn, picked.index, request)

    def _too_long(self, request: dict[str, Any]) -> bool:
        """Answer a provider's context-length error when the request passes the server's limit."""
        limit = self.replay.context_limit
        if limit is None:
            return False
        size = request_size(request)
        if size <= limit:
            return False
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {size} tokens. Please reduce the length of the messages."
        )
        self.replay.note(f"refused a request of {size} tokens (limit {limit})")
        self._send_json(400, error_json(400, message, code="context_length_exceeded"))
        return True

    def _messages_api(self) -> None:
        """Anthropic's `POST /v1/messages`: the same scripted turns in Anthropic's wire format."""
        try:
            request = self._read_json()
        except ValueError as exc:
            self._send_json(400, anthropic_error(400, f"goat replay: request body is not JSON: {exc}"))
            return
        self.replay.requests.append(request)
        self.replay.request_times.append(time.monotonic())
        try:
            picked = self.replay.source.pick(request)
        except NoTurnError as exc:
            self._send_json(400, anthropic_error(400, str(exc)))
            return
        turn = picked.turn
        if turn.delay_s:
            time.sleep(turn.delay_s)
        if isinstance(turn, ErrorTurn):
            self._send_json(
                turn.error.status,
                anthropic_error(turn.error.status, turn.error.message),
                _error_headers(turn),
            )
            return
        reply = Reply(
            turn, picked.index, self.replay.model or str(request.get("model") or DEFAULT_MODEL), request
        )
        usage = self.replay.prompt_cache.usage(request)
        if not request.get("stream"):
            self._send_json(200, message_json(reply, usage))
            return
        self._start_response(
            200, "text/event-stream", {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        )
        self._write_chunk(b"".join(message_events(reply, usage)))
        self.wfile.write(b"0\r\n\r\n")

    def _answer(self, turn: AnyTurn, index: int, request: dict[str, Any]) -> None:
        if turn.delay_s:
            time.sleep(turn.delay_s)
        if isinstance(turn, ErrorTurn):
            spec = turn.error
            self._send_json(spec.status, error_json(spec.status, spec.message), _error_headers(turn))
            return
        model = self.replay.model or str(request.get("model") or DEFAULT_MODEL)
        reply = Reply(turn, index, model, request)
        try:
            if request.get("stream"):
                options = request.get("stream_options")
                include_usage = isinstance(options, dict) and bool(
                    cast(dict[str, Any], options).get("include_usage")
                )
                self._send_stream(reply, stream_chunks(reply, include_usage=include_usage))
            else:
                self._send_completion(reply)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_completion(self, reply: Reply) -> None:
        body = wire_json(completion_json(reply)).encode()
        if not reply.turn.cut_stream:
            self._send_bytes(200, body, "application/json")
            return
        self._start_response(200, "application/json", {"Content-Length": str(len(body))})
        self.wfile.write(body[: len(body) // 2])
        self.close_connection = True

    def _send_stream(self, reply: Reply, chunks: Iterator[dict[str, Any]]) -> None:
        self._start_response(
            200, "text/event-stream", {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        )
        delay = reply.turn.chunk_delay_s
        if reply.turn.stall_after is not None:
            self._stall(reply, chunks)
            return
        if delay:
            for number, chunk in enumerate(chunks):
                time.sleep(delay if number else 0)
                self._write_chunk(sse_event(chunk))
        else:  # one write: still many SSE events, without a syscall per event
            self._write_chunk(b"".join(sse_event(chunk) for chunk in chunks))
        if reply.turn.cut_stream:
            self.close_connection = True  # closing now leaves the chunked body incomplete
            return
        self._write_chunk(sse_event("[DONE]"))
        self.wfile.write(b"0\r\n\r\n")

    def _stall(self, reply: Reply, chunks: Iterator[dict[str, Any]]) -> None:
        """Send `stall_after` chunks, then go quiet for `stall_s` seconds and drop the connection."""
        for number, chunk in enumerate(chunks):
            if number >= (reply.turn.stall_after or 0):
                break
            self._write_chunk(sse_event(chunk))
        self.wfile.flush()
        self.replay.stall_times.append(time.monotonic())
        self.replay.stopping.wait(reply.turn.stall_s)
        self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        data = loads_json(self.rfile.read(length) or b"null")
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return cast(dict[str, Any], data)

    def _start_response(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_bytes(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self._start_response(status, content_type, {"Content-Length": str(len(body)), **(headers or {})})
        self.wfile.write(body)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, wire_json(payload).encode(), "application/json", headers)


def _error_headers(turn: ErrorTurn) -> dict[str, str]:
    spec = turn.error
    headers: dict[str, str] = {}
    if spec.retry_after is not None:
        headers["Retry-After"] = f"{spec.retry_after:g}"
    if spec.retry_after_ms is not None:
        headers["retry-after-ms"] = str(spec.retry_after_ms)
    return headers


def request_size(request: dict[str, Any]) -> int:
    """The server's token estimate of a request (characters / 4 of its messages and tools)."""
    text = json.dumps(request.get("messages", []), ensure_ascii=False)
    return estimate_tokens(text + json.dumps(request.get("tools", []), ensure_ascii=False))
