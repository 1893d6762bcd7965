"""OpenAI chat-completions payloads for a turn: full completions, stream chunks and errors."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from goat_jupyter.replay.cassette import ResponseTurn, ToolCallSpec

ARGUMENT_PIECE_CHARS = 8
_WORDS = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True)
class Reply:
    """What is needed to answer one request with one response turn."""

    turn: ResponseTurn
    turn_index: int
    model: str
    request: dict[str, Any]

    @property
    def completion_id(self) -> str:
        return f"chatcmpl-replay-{self.turn_index}"

    def call_id(self, position: int, call: ToolCallSpec) -> str:
        return call.id or f"call_replay_{self.turn_index}_{position}"


def split_text(text: str) -> list[str]:
    """Split text into word-sized pieces (whitespace kept) the way models stream it."""
    return _WORDS.findall(text)


def split_arguments(arguments: str) -> list[str]:
    """Split an arguments string into small pieces so clients must reassemble it."""
    return [arguments[i : i + ARGUMENT_PIECE_CHARS] for i in range(0, len(arguments), ARGUMENT_PIECE_CHARS)]


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def usage_json(reply: Reply) -> dict[str, int]:
    """The turn's usage, or an estimate (characters / 4) so cost code always has numbers."""
    turn = reply.turn
    if turn.usage is not None:
        prompt, completion = turn.usage.prompt_tokens, turn.usage.completion_tokens
    else:
        request_text = json.dumps(reply.request.get("messages", []), ensure_ascii=False)
        request_text += json.dumps(reply.request.get("tools", []), ensure_ascii=False)
        prompt = estimate_tokens(request_text)
        answer = turn.text + "".join(c.name + c.arguments_json() for c in turn.tool_calls)
        completion = estimate_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_json(reply: Reply) -> dict[str, Any]:
    """A non-streaming `chat.completion` object."""
    turn = reply.turn
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": reply.call_id(i, call),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for i, call in enumerate(turn.tool_calls)
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": turn.resolved_finish_reason(),
    }
    return {**_envelope(reply, "chat.completion"), "choices": [choice], "usage": usage_json(reply)}


def stream_chunks(reply: Reply, *, include_usage: bool) -> Iterator[dict[str, Any]]:
    """`chat.completion.chunk` objects: role, text pieces, tool-call pieces, finish, usage."""
    turn = reply.turn
    yield _chunk(reply, {"role": "assistant", "content": ""})
    for piece in split_text(turn.text):
        yield _chunk(reply, {"content": piece})
    for position, call in enumerate(turn.tool_calls):
        yield from _tool_call_chunks(reply, position, call)
    if turn.cut_stream:
        return
    final = _chunk(reply, {}, finish_reason=turn.resolved_finish_reason())
    if include_usage:
        yield final
        yield {**_envelope(reply, "chat.completion.chunk"), "choices": [], "usage": usage_json(reply)}
    else:
        yield {**final, "usage": usage_json(reply)}


def _tool_call_chunks(reply: Reply, position: int, call: ToolCallSpec) -> Iterator[dict[str, Any]]:
    """First chunk names the call; the arguments string follows in several pieces."""
    head = {
        "index": position,
        "id": reply.call_id(position, call),
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    yield _chunk(reply, {"tool_calls": [head]})
    for piece in split_arguments(call.arguments_json()):
        yield _chunk(reply, {"tool_calls": [{"index": position, "function": {"arguments": piece}}]})


def _chunk(reply: Reply, delta: dict[str, Any], *, finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return {**_envelope(reply, "chat.completion.chunk"), "choices": [choice]}


def _envelope(reply: Reply, kind: str) -> dict[str, Any]:
    return {
        "id": reply.completion_id,
        "object": kind,
        "created": int(time.time()),
        "model": reply.model,
        "system_fingerprint": None,
    }


def error_json(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body, typed the way the status suggests."""
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
    kind = "rate_limit_error" if status == 429 else kinds.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code or kind}}


def wire_json(payload: Any) -> str:
    """JSON for the wire: readable UTF-8, but a lone surrogate (a scripted hostile model's) is sent
    escaped (`\\ud800`), the only way JSON can carry it."""
    text = json.dumps(payload, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload)
    return text


def sse_event(payload: dict[str, Any] | str) -> bytes:
    """One server-sent event line pair: `data: ...` and a blank line."""
    data = payload if isinstance(payload, str) else wire_json(payload)
    return f"data: {data}\n\n".encode()
