"""Anthropic Messages API payloads for a turn (`POST /v1/messages`), streamed or whole.

The server also imitates Anthropic's prompt cache, so clients can test their cache breakpoints:
every `cache_control` marker names a prefix (system, then tools, then messages, in that order);
a later request that repeats a prefix already seen reads it from the "cache".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any, cast

from goat_jupyter.replay.wire import Reply, estimate_tokens, split_arguments, split_text, wire_json


def _blocks(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [cast(dict[str, Any], item) for item in items if isinstance(item, dict)]


def cache_segments(request: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request in prompt order as (serialised block, carries a breakpoint)."""
    segments: list[tuple[str, bool]] = []
    for block in _blocks(request.get("system")):
        segments.append((json.dumps(_without_marker(block), sort_keys=True), "cache_control" in block))
    for tool in _blocks(request.get("tools")):
        segments.append((json.dumps(_without_marker(tool), sort_keys=True), "cache_control" in tool))
    for message in _blocks(request.get("messages")):
        for block in _blocks(message.get("content")):
            marked = "cache_control" in block
            segments.append(
                (str(message.get("role")) + json.dumps(_without_marker(block), sort_keys=True), marked)
            )
    return segments


def _without_marker(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


class PromptCache:
    """Prefixes ending at a breakpoint that earlier requests wrote; thread-safe."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, request: dict[str, Any]) -> dict[str, int]:
        segments = cache_segments(request)
        total = estimate_tokens("".join(text for text, _ in segments))
        prefix = ""
        read = written = 0
        with self._lock:
            for text, marked in segments:
                prefix += text
                if not marked:
                    continue
                if prefix in self._seen:
                    read = estimate_tokens(prefix)
                else:
                    self._seen.add(prefix)
                    written = estimate_tokens(prefix)
        written = max(written - read, 0)
        return {
            "input_tokens": max(total - read - written, 0),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {wire_json({'type': kind, **payload})}\n\n".encode()


def _output_tokens(reply: Reply) -> int:
    turn = reply.turn
    if turn.usage is not None:
        return turn.usage.completion_tokens
    return estimate_tokens(turn.text + "".join(c.name + c.arguments_json() for c in turn.tool_calls))


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.turn.tool_calls else "end_turn"


def _tool_id(reply: Reply, position: int) -> str:
    return reply.turn.tool_calls[position].id or f"toolu_replay_{reply.turn_index}_{position}"


def message_events(reply: Reply, usage: dict[str, int]) -> Iterator[bytes]:
    """The SSE events of one streamed message: start, content blocks in pieces, delta, stop."""
    head: dict[str, Any] = {
        "id": f"msg_replay_{reply.turn_index}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": reply.model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    yield _event("message_start", {"message": head})
    index = 0
    if reply.turn.text:
        yield _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
        for piece in split_text(reply.turn.text):
            yield _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
        yield _event("content_block_stop", {"index": 0})
        index = 1
    for position, call in enumerate(reply.turn.tool_calls):
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": _tool_id(reply, position),
            "name": call.name,
            "input": {},
        }
        yield _event("content_block_start", {"index": index, "content_block": block})
        for piece in split_arguments(call.arguments_json()):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield _event("content_block_delta", {"index": index, "delta": delta})
        yield _event("content_block_stop", {"index": index})
        index += 1
    stop = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
    yield _event("message_delta", {"delta": stop, "usage": {"output_tokens": _output_tokens(reply)}})
    yield _event("message_stop", {})


def message_json(reply: Reply, usage: dict[str, int]) -> dict[str, Any]:
    """A whole (non-streamed) Messages API response."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.turn.text}] if reply.turn.text else []
    for position, call in enumerate(reply.turn.tool_calls):
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        content.append(
            {"type": "tool_use", "id": _tool_id(reply, position), "name": call.name, "input": arguments}
        )
    return {
        "id": f"msg_replay_{reply.turn_index}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": reply.model,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": _output_tokens(reply)},
    }


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    kind = "rate_limit_error" if status == 429 else "invalid_request_error" if status < 500 else "api_error"
    return {"type": "error", "error": {"type": kind, "message": message}}
