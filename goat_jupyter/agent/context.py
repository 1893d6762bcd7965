"""The context budget: counting a request's tokens and pruning old tool output in the request only.

The saved session keeps every original; what the model sees is a view in which tool outputs and
images older than the most recent `keep_recent` tokens become one-line placeholders. Placeholders
keep their `tool_call_id`, so a tool call is never separated from its result.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.agent.litellm_loader import count_text_tokens, model_limits

Message = dict[str, Any]
IMAGE_TOKENS = 1_000  # a typical plot at the providers' "auto" detail; bytes say little about it
MESSAGE_OVERHEAD = 4
DEFAULT_WINDOW = 128_000
SMALL_OUTPUT = 200  # tool outputs below this many tokens are never pruned (the placeholder costs ~40)


@dataclass(frozen=True)
class Budget:
    """The model's window, what is left for input after the reserved output, and the trigger."""

    window: int
    usable: int
    threshold: int
    keep_recent: int


def budget_for(
    model: str, context_window: int | None, max_tokens: int | None, compact_at: float, keep_recent: int
) -> Budget:
    known_window, max_output = model_limits(model)
    window = context_window or known_window or DEFAULT_WINDOW
    reserve = min(max_tokens or max_output or 8_192, window // 8)
    usable = window - reserve
    return Budget(window, usable, int(usable * compact_at), min(keep_recent, usable // 4))


@functools.lru_cache(maxsize=8192)
def text_tokens(text: str) -> int:
    return count_text_tokens(text) if text else 0


def _parts(content: Any) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], p) for p in cast(list[Any], content) if isinstance(p, dict)]


def content_tokens(content: Any) -> tuple[int, int]:
    """(text tokens, image tokens) of a message content: a string or a list of parts."""
    if isinstance(content, str):
        return text_tokens(content), 0
    if not isinstance(content, list):
        return 0, 0
    text = images = 0
    for part in _parts(content):
        if part.get("type") == "image_url":
            images += IMAGE_TOKENS
        else:
            text += text_tokens(str(part.get("text", "")))
    return text, images


def message_tokens(message: Message) -> int:
    text, images = content_tokens(message.get("content"))
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        text += text_tokens(json.dumps(calls, ensure_ascii=False))
    return MESSAGE_OVERHEAD + text + images


def tools_tokens(tools: Sequence[dict[str, Any]]) -> int:
    return text_tokens(json.dumps(list(tools), ensure_ascii=False)) if tools else 0


def request_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages) + tools_tokens(tools)


def has_images(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(p.get("type") == "image_url" for p in _parts(content))


def _call_names(messages: Sequence[Message]) -> dict[str, str]:
    """tool_call_id -> `Name(arguments…)`, for placeholders that say how to get the output again."""
    names: dict[str, str] = {}
    for message in messages:
        for call in cast(list[dict[str, Any]], message.get("tool_calls") or []):
            function = cast(dict[str, Any], call.get("function") or {})
            arguments = str(function.get("arguments") or "")
            shown = arguments if len(arguments) <= 120 else arguments[:117] + "…"
            names[str(call.get("id"))] = f"{function.get('name', 'a tool')}({shown})"
    return names


def pruned_tool_message(message: Message, call: str) -> Message:
    tokens = content_tokens(message.get("content"))[0]
    text = (
        f"[Pruned to save context: {tokens:,} tokens of output from {call}. "
        "Call the tool again if you need it.]"
    )
    return {**message, "content": text}


def pruned_image_message(message: Message) -> Message:
    count = sum(1 for p in _parts(message.get("content")) if p.get("type") == "image_url")
    text = f"[Pruned to save context: {count} image(s) returned by the tools above. Call the tool again to see them.]"
    return {"role": message.get("role", "user"), "content": text}


def prunable(message: Message) -> bool:
    if message.get("role") == "tool":
        return content_tokens(message.get("content"))[0] >= SMALL_OUTPUT
    return message.get("role") == "user" and has_images(message)


def prune_point(messages: Sequence[Message], keep_recent: int) -> int:
    """Index before which prunable outputs go: everything older than the newest `keep_recent` tokens."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        seen += message_tokens(messages[index])
        if seen > keep_recent:
            return index + 1
    return 0


def pruned_view(messages: Sequence[Message], upto: int) -> list[Message]:
    """The messages with prunable outputs before `upto` replaced by placeholders."""
    if upto <= 0:
        return list(messages)
    names = _call_names(messages[:upto])
    view: list[Message] = []
    for index, message in enumerate(messages):
        if index < upto and prunable(message):
            if message.get("role") == "tool":
                call = names.get(str(message.get("tool_call_id")), "a tool")
                message = pruned_tool_message(message, call)
            else:
                message = pruned_image_message(message)
        view.append(message)
    return view


@dataclass
class Breakdown:
    """Where a request's tokens go, for `%goat context`."""

    system: int = 0
    tools: int = 0
    conversation: int = 0
    tool_outputs: int = 0
    images: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.conversation + self.tool_outputs + self.images

    def rows(self) -> list[tuple[str, int]]:
        return [
            ("System prompt", self.system),
            ("Tool definitions", self.tools),
            ("Conversation", self.conversation),
            ("Tool outputs", self.tool_outputs),
            ("Images", self.images),
        ]


def breakdown(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> Breakdown:
    parts = Breakdown(tools=tools_tokens(tools))
    for message in messages:
        text, images = content_tokens(message.get("content"))
        parts.images += images
        size = MESSAGE_OVERHEAD + text
        if message.get("role") == "system":
            parts.system += size
        elif message.get("role") == "tool":
            parts.tool_outputs += size
        else:
            parts.conversation += message_tokens(message) - images
    return parts
