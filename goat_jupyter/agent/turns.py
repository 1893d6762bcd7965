"""One streamed assistant turn: its text, tool calls, usage and cost, and how chunks join into it."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from goat_jupyter.text import loads_json, map_strings, without_surrogates


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens, written to the cache (Anthropic)

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.cache_write_tokens += other.cache_write_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd


@dataclass
class AssistantTurn:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=lambda: list[ToolCallRequest]())
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


class ToolCallAccumulator:
    """Joins tool-call deltas (id and name first, arguments split across chunks) by index."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}

    def add(self, delta: Any) -> None:
        index = getattr(delta, "index", None)
        slot = self._calls.setdefault(index if isinstance(index, int) else len(self._calls), {})
        if getattr(delta, "id", None):
            slot["id"] = str(delta.id)
        function = getattr(delta, "function", None)
        if function is not None:
            if getattr(function, "name", None):
                slot["name"] = slot.get("name", "") + str(function.name)
            if getattr(function, "arguments", None):
                slot["arguments"] = slot.get("arguments", "") + str(function.arguments)

    def result(self) -> list[ToolCallRequest]:
        calls: list[ToolCallRequest] = []
        for index in sorted(self._calls):
            slot = self._calls[index]
            call_id = slot.get("id") or f"call_{index}_{random.randrange(1 << 30):x}"
            name, arguments = slot.get("name", ""), slot.get("arguments", "")
            calls.append(
                ToolCallRequest(
                    without_surrogates(call_id), without_surrogates(name), clean_arguments(arguments)
                )
            )
        return calls


def clean_arguments(raw: str) -> str:
    """The model's arguments with every lone surrogate as U+FFFD, also one it escaped (`"\\ud800"`,
    which only parsing reveals), so the history, the session file and the recording all encode."""
    text = without_surrogates(raw)
    if "\\u" not in text:
        return text
    try:
        value = loads_json(text, "The tool arguments")
    except ValueError:
        return text  # the executor refuses arguments that are not JSON, with the reason
    cleaned = map_strings(value, without_surrogates)
    return text if cleaned == value else json.dumps(cleaned, ensure_ascii=False)


def token_count(value: object) -> int:
    """A usage field as a count: whatever else a provider (or a hostile server) sends counts 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(0, int(value))


def estimate_cost(litellm: ModuleType, model: str, usage: Usage) -> float | None:
    """Price with litellm's cost map, cache reads and writes at their own rates."""
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cache_read_input_tokens=usage.cached_tokens,
            cache_creation_input_tokens=usage.cache_write_tokens,
        )
    except Exception:  # unknown models have no price: show tokens only
        return None
    return float(prompt_cost) + float(completion_cost)


def absorb(
    chunk: Any,
    turn: AssistantTurn,
    calls: ToolCallAccumulator,
    text_parts: list[str],
    on_text: Callable[[str], None],
) -> None:
    """Fold one streamed chunk into the turn: usage, finish reason, text (also passed to `on_text`)
    and tool-call deltas."""
    usage = getattr(chunk, "usage", None)
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        turn.usage.prompt_tokens = token_count(usage.prompt_tokens)
        turn.usage.completion_tokens = token_count(getattr(usage, "completion_tokens", 0))
        turn.usage.cached_tokens, turn.usage.cache_write_tokens = cache_tokens(usage)
    for choice in as_list(getattr(chunk, "choices", None)):
        delta = getattr(choice, "delta", None)
        if getattr(choice, "finish_reason", None):
            turn.finish_reason = without_surrogates(str(choice.finish_reason))
        if delta is None:
            continue
        if getattr(delta, "content", None):
            text = without_surrogates(str(delta.content))  # the model's text must encode everywhere
            text_parts.append(text)
            on_text(text)
        for tool_delta in as_list(getattr(delta, "tool_calls", None)):
            calls.add(tool_delta)


def as_list(value: Any) -> list[Any]:
    """A provider's optional list field as a typed list."""
    return list(value) if isinstance(value, (list, tuple)) else []  # pyright: ignore[reportUnknownArgumentType]


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(cache reads, cache writes) from a litellm usage object, whichever fields the provider filled."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return token_count(read), token_count(written)
