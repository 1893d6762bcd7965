"""Helpers for tests that talk to a scripted LLM over real HTTP (goat_jupyter.replay).

In a test module, define the fixture from the context manager (or register this module as a
pytest plugin to get the `replay_server` fixture):

    @pytest.fixture
    def replay_server() -> Iterator[ServerFactory]:
        with replay_servers() as start:
            yield start

    async def test_something(replay_server: ServerFactory) -> None:
        server = replay_server([text_turn("hi"), tool_turn("Read", {"file_path": "/x"})])
        response = await litellm.acompletion(messages=[...], stream=True, **litellm_kwargs(server))
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import litellm

from goat_jupyter.replay import REPLAY_MODEL, CassetteLike, ReplayServer

litellm.suppress_debug_info = True

ServerFactory = Callable[..., ReplayServer]


@contextmanager
def replay_servers() -> Iterator[ServerFactory]:
    """Yield `start(turns, **kwargs)`, which starts a ReplayServer; all are stopped on exit."""
    servers: list[ReplayServer] = []

    def start(script: CassetteLike = (), **kwargs: Any) -> ReplayServer:
        server = ReplayServer(script, **kwargs)
        server.start()
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def replay_server() -> Iterator[ServerFactory]:
    """Factory fixture (register via `pytest_plugins = ["tests.replay_helpers"]` in a conftest)."""
    with replay_servers() as start:
        yield start


def litellm_kwargs(server: ReplayServer, **extra: Any) -> dict[str, Any]:
    """Keyword arguments for litellm.(a)completion aimed at `server`; no client-side retries."""
    return {"model": REPLAY_MODEL, "api_base": server.url, "api_key": "replay", "max_retries": 0, **extra}


async def llm_call(**kwargs: Any) -> Any:
    """litellm.acompletion typed loosely (its declared result is a union of stream and response)."""
    return await litellm.acompletion(**kwargs)


def rebuild_stream(chunks: list[Any]) -> Any:
    """litellm's own reassembly of a stream's chunks into one response."""
    return litellm.stream_chunk_builder(chunks)


def text_turn(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def tool_turn(
    name: str, arguments: dict[str, Any] | str | None = None, *, text: str = "", **extra: Any
) -> dict[str, Any]:
    """A response turn with one tool call (arguments as a dict, or a raw string)."""
    return {"text": text, "tool_calls": [{"name": name, "arguments": arguments or {}}], **extra}


def error_turn(status: int, message: str = "scripted error", **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "message": message}, **extra}


@dataclass
class StreamResult:
    """What a litellm stream delivered, rebuilt from its deltas."""

    chunks: int = 0
    text_pieces: list[str] = field(default_factory=lambda: list[str]())
    tool_calls: dict[int, dict[str, str]] = field(default_factory=lambda: dict[int, dict[str, str]]())
    argument_pieces: int = 0
    finish_reason: str | None = None
    usage: Any = None

    @property
    def text(self) -> str:
        return "".join(self.text_pieces)


async def collect_stream(stream: AsyncIterable[Any]) -> StreamResult:
    """Accumulate a litellm stream's deltas (text, tool calls by index, finish reason, usage)."""
    result = StreamResult()
    async for chunk in stream:
        result.chunks += 1
        result.usage = getattr(chunk, "usage", None) or result.usage
        for choice in chunk.choices:
            result.finish_reason = choice.finish_reason or result.finish_reason
            if choice.delta.content:
                result.text_pieces.append(choice.delta.content)
            for call in choice.delta.tool_calls or []:
                _add_tool_delta(result, call)
    return result


def _add_tool_delta(result: StreamResult, call: Any) -> None:
    entry = result.tool_calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
    entry["id"] = call.id or entry["id"]
    entry["name"] = call.function.name or entry["name"]
    if call.function.arguments:
        entry["arguments"] += call.function.arguments
        result.argument_pieces += 1
