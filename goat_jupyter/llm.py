"""The only module that imports litellm (lazily): streaming turns, retries, usage and cost."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from goat_jupyter.errors import LLMError

_litellm: ModuleType | None = None
_import_lock = threading.Lock()
_warm_started = False
warmed = threading.Event()  # set when the background warm-up has finished (benchmarks wait on it)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def _import_litellm() -> ModuleType:
    global _litellm
    with _import_lock:
        if _litellm is None:
            # Never fetch the cost map over the network at import time; keep litellm quiet.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            import litellm

            litellm.suppress_debug_info = True
            litellm.drop_params = True
            # goat computes usage and cost itself; litellm's per-chunk logging only costs time.
            litellm.disable_streaming_logging = True
            litellm.disable_token_counter = True
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            _litellm = litellm
    return _litellm


_WARM_UP_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "noop",
        "description": "warm-up",
        "parameters": {"type": "object", "properties": {}},
    },
}


def _warm_up() -> None:
    """Import litellm, then stream one request with a tool to a throwaway local server.

    litellm defers most of its imports (provider clients, async streaming, cost code, and the
    tool-handling modules that pull in the MCP SDK) to the first call, which costs seconds. The
    call here is async with a tool, like a real turn, and runs on this thread's own event loop, so
    the kernel's first turn finds everything imported. No network is used.
    """
    litellm = _import_litellm()
    from goat_jupyter.replay import ReplayServer

    async def stream_one(url: str) -> None:
        stream = await litellm.acompletion(
            model="openai/goat-warm-up",
            api_base=url,
            api_key="warm-up",
            messages=[{"role": "user", "content": "warm up"}],
            tools=[_WARM_UP_TOOL],
            stream=True,
            stream_options={"include_usage": True},
            max_retries=0,
        )
        async for _chunk in stream:
            pass

    try:
        with ReplayServer([{"text": "ok"}]) as server:
            asyncio.run(stream_one(server.url))
    except Exception:  # warming is an optimisation; the real call reports real problems
        logging.getLogger(__name__).debug("litellm warm-up failed", exc_info=True)


def prewarm_now() -> None:
    """Warm litellm up once; blocking, so call it from a background thread (see extension.py)."""
    global _warm_started
    with _import_lock:
        if _warm_started:
            return
        _warm_started = True
    try:
        _warm_up()
    finally:
        warmed.set()


def litellm_loaded() -> bool:
    return _litellm is not None


async def litellm_module() -> ModuleType:
    """litellm, waiting for the pre-warm thread without blocking the event loop."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(_import_litellm)


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

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd


@dataclass
class AssistantTurn:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=lambda: list[ToolCallRequest]())
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_delay_s)
        return min(self.base_delay_s * (2**attempt), self.max_delay_s) * (0.75 + random.random() / 2)


class _ToolCallAccumulator:
    """Joins tool-call deltas (id and name first, arguments split across chunks) by index."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}

    def add(self, delta: Any) -> None:
        index = getattr(delta, "index", None)
        slot = self._calls.setdefault(index if isinstance(index, int) else len(self._calls), {})
        if getattr(delta, "id", None):
            slot["id"] = delta.id
        function = getattr(delta, "function", None)
        if function is not None:
            if getattr(function, "name", None):
                slot["name"] = slot.get("name", "") + function.name
            if getattr(function, "arguments", None):
                slot["arguments"] = slot.get("arguments", "") + function.arguments

    def result(self) -> list[ToolCallRequest]:
        calls: list[ToolCallRequest] = []
        for index in sorted(self._calls):
            slot = self._calls[index]
            call_id = slot.get("id") or f"call_{index}_{random.randrange(1 << 30):x}"
            calls.append(ToolCallRequest(call_id, slot.get("name", ""), slot.get("arguments", "")))
        return calls


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def is_retryable(exc: BaseException, litellm: ModuleType) -> bool:
    status = _status_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS
    transient = (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.APIConnectionError,
        litellm.Timeout,
    )
    return isinstance(exc, (*transient, ConnectionError, asyncio.IncompleteReadError))


def estimate_cost(litellm: ModuleType, model: str, usage: Usage) -> float | None:
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
        )
    except Exception:  # unknown models have no price: show tokens only
        return None
    return float(prompt_cost) + float(completion_cost)


@dataclass
class LLMClient:
    """Streams one assistant turn at a time; retries transient failures with backoff."""

    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    extra: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None],
    ) -> AssistantTurn:
        litellm = await litellm_module()
        attempt = 0
        while True:
            try:
                return await self._stream_once(litellm, messages, tools, on_text)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if attempt >= self.retry.max_retries or not is_retryable(exc, litellm):
                    raise LLMError(f"The model call failed: {type(exc).__name__}: {exc}") from exc
                wait = self.retry.delay(attempt, _retry_after(exc))
                on_retry(f"{_describe(exc)}; retrying in {wait:.1f}s (attempt {attempt + 2})")
                await asyncio.sleep(wait)
                attempt += 1

    async def _stream_once(
        self,
        litellm: ModuleType,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
    ) -> AssistantTurn:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            # Retries are ours (with notices in the cell); the provider SDK must not retry silently.
            "max_retries": 0,
            "num_retries": 0,
            **self.extra,
        }
        if tools:
            params["tools"] = tools
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        stream = await litellm.acompletion(**params)
        turn = AssistantTurn()
        calls = _ToolCallAccumulator()
        text_parts: list[str] = []
        async for chunk in stream:
            self._absorb(chunk, turn, calls, text_parts, on_text)
        turn.text = "".join(text_parts)
        turn.tool_calls = calls.result()
        turn.usage.cost_usd = estimate_cost(litellm, self.model, turn.usage)
        return turn

    @staticmethod
    def _absorb(
        chunk: Any,
        turn: AssistantTurn,
        calls: _ToolCallAccumulator,
        text_parts: list[str],
        on_text: Callable[[str], None],
    ) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            turn.usage.prompt_tokens = int(usage.prompt_tokens or 0)
            turn.usage.completion_tokens = int(usage.completion_tokens or 0)
        for choice in as_list(getattr(chunk, "choices", None)):
            delta = getattr(choice, "delta", None)
            if getattr(choice, "finish_reason", None):
                turn.finish_reason = choice.finish_reason
            if delta is None:
                continue
            if getattr(delta, "content", None):
                text_parts.append(delta.content)
                on_text(delta.content)
            for tool_delta in as_list(getattr(delta, "tool_calls", None)):
                calls.add(tool_delta)


def as_list(value: Any) -> list[Any]:
    """A provider's optional list field as a typed list."""
    return list(value) if isinstance(value, (list, tuple)) else []  # pyright: ignore[reportUnknownArgumentType]


def _describe(exc: BaseException) -> str:
    status = _status_of(exc)
    name = type(exc).__name__
    return f"{name} (HTTP {status})" if status is not None else name
