"""The only module that imports litellm (lazily): streaming turns, retries, usage and cost."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from goat_jupyter.agent.endpoint import is_local_endpoint, reading_allowance_s, reading_status
from goat_jupyter.agent.provider_errors import (
    MissingCredentialsError,
    kind_of,
    missing_key_text,
    missing_key_variables,
    permanent_error,
)
from goat_jupyter.agent.resilience import (
    RetryPolicy,
    StreamTimeoutError,
    await_within,
    next_within,
    retry_after_seconds,
)
from goat_jupyter.errors import ContextLengthError, LLMError
from goat_jupyter.text import without_surrogates

if TYPE_CHECKING:
    from goat_jupyter.settings import Settings

_litellm: ModuleType | None = None
_import_lock = threading.Lock()
_warm_started = False
warmed = threading.Event()  # set when the background warm-up has finished (benchmarks wait on it)

UNREACHABLE_RETRY_S = 0.5
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def _drop_surrogate_noise(record: logging.LogRecord) -> bool:
    """litellm's own stream log fails on a model's lone surrogate; goat replaces it, so the traceback
    it would print into the cell is noise."""
    return "surrogates not allowed" not in record.getMessage()


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
            logging.getLogger("LiteLLM").addFilter(_drop_surrogate_noise)
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
        count_text_tokens("warm up")  # the context budget counts every request with this tokenizer
        with ReplayServer([{"text": "ok"}]) as server:
            asyncio.run(stream_one(server.url))
    except Exception:  # warming is an optimisation; the real call reports real problems
        logging.getLogger(__name__).debug("litellm warm-up failed", exc_info=True)


def prewarm_now() -> None:
    """Warm litellm up once; blocking, so call it from a background thread (see kernel/extension.py)."""
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
class PromptInfo:
    """What the loop knows about a request before sending it: its size, and where status goes."""

    tokens: int
    on_status: Callable[[str], None] | None = None


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
            name, arguments = slot.get("name", ""), slot.get("arguments", "")
            calls.append(
                ToolCallRequest(
                    without_surrogates(call_id), without_surrogates(name), without_surrogates(arguments)
                )
            )
        return calls


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


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
    return isinstance(exc, (*transient, ConnectionError, asyncio.IncompleteReadError, StreamTimeoutError))


_CONTEXT_PHRASES = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
)


def is_context_overflow(exc: BaseException, litellm: ModuleType) -> bool:
    """The provider refused the request because it does not fit the model's window."""
    if isinstance(exc, litellm.ContextWindowExceededError):
        return True
    text = str(exc).lower()
    return _status_of(exc) in (400, 413, None) and any(phrase in text for phrase in _CONTEXT_PHRASES)


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


class _CountingSink:
    """Passes streamed text on and counts it, so a failed attempt's text can be taken back."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink
        self.chars = 0

    def __call__(self, text: str) -> None:
        self.chars += len(text)
        self.sink(text)


@dataclass
class LLMClient:
    """Streams one assistant turn at a time; retries transient failures with backoff."""

    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    extra: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    first_token_timeout_s: float = 120.0  # connect + the first chunk
    idle_timeout_s: float = 60.0  # between two chunks
    # A server on this machine reads a long prompt for minutes before its first token (issue 23).
    local: bool = False
    prompt_tokens_per_s: float = 20.0  # the slowest prompt reading a local server is given time for
    status_after_s: float = 3.0  # a local model still reading after this long says so

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None],
        on_stall: Callable[[str], None] | None = None,
        *,
        answer_cap: int | None = None,
        on_discard: Callable[[int], None] | None = None,
        prompt: PromptInfo | None = None,
    ) -> AssistantTurn:
        """One turn. `answer_cap` lowers max_tokens for this request (a budget's limit);
        `on_discard(chars)` takes back the text a failed attempt streamed before its retry."""
        litellm = await litellm_module()
        stalled = on_stall or on_retry
        started = time.monotonic()
        waited = 0.0
        attempt = 0
        missing = missing_key_variables(litellm, self.model, self.extra)
        if missing:  # no request: it could only fail, and litellm would call that an HTTP 500
            raise MissingCredentialsError(missing_key_text(self.model, missing))
        while True:
            shown = _CountingSink(on_text)
            try:
                return await self._stream_once(litellm, messages, tools, shown, stalled, answer_cap, prompt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._raise_if_final(exc, litellm, attempt)
                if shown.chars and on_discard is not None:  # the retry streams the answer again
                    on_discard(shown.chars)
                if kind_of(exc, litellm) == "unreachable":  # one quick retry: a server may be starting
                    on_retry(f"connection refused; retrying once in {UNREACHABLE_RETRY_S:g} s")
                    await asyncio.sleep(UNREACHABLE_RETRY_S)
                    attempt += 1
                    continue
                wait = self.retry.delay(attempt, retry_after_seconds(exc))
                if attempt >= self.retry.max_retries or waited + wait > self.retry.max_total_wait_s:
                    raise LLMError(self._give_up(exc, attempt + 1, time.monotonic() - started)) from exc
                on_retry(_retry_text(exc, wait, attempt, retry_after_seconds(exc)))
                await asyncio.sleep(wait)
                waited += wait
                attempt += 1

    def _raise_if_final(self, exc: Exception, litellm: ModuleType, attempt: int) -> None:
        """Raise the typed error for a failure that no (further) retry can fix."""
        if is_context_overflow(exc, litellm):
            raise ContextLengthError(f"The request does not fit the model's context: {exc}") from exc
        kind = kind_of(exc, litellm)
        if kind == "unreachable" and attempt == 0:
            return
        final = permanent_error(exc, kind, self.model, litellm)
        if final is not None:
            raise final from exc
        if not is_retryable(exc, litellm):
            raise LLMError(f"The model call failed: {type(exc).__name__}: {exc}") from exc

    def _give_up(self, exc: BaseException, attempts: int, elapsed_s: float) -> str:
        return (
            f"The model call failed after {attempts} attempt{'s' if attempts != 1 else ''} over "
            f"{elapsed_s:.0f} s: {_describe(exc)}: {exc}. The provider may be overloaded or down: run "
            "the cell again later, or raise max_retries / max_retry_wait_s in .goat/settings.json, "
            "or switch model with %goat config model=..."
        )

    def _params(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        answer_cap: int | None = None,
    ) -> dict[str, Any]:
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
        caps = [cap for cap in (self.max_tokens, answer_cap) if cap is not None]
        if caps:
            params["max_tokens"] = min(caps)
        return params

    def first_token_timeout(self, prompt: PromptInfo | None) -> float:
        """The normal first-token timeout, plus reading time for a long prompt on a local server."""
        if not self.local or prompt is None:
            return self.first_token_timeout_s
        return self.first_token_timeout_s + reading_allowance_s(prompt.tokens, self.prompt_tokens_per_s)

    def _reading_notice(self, prompt: PromptInfo | None) -> asyncio.TimerHandle | None:
        if not self.local or prompt is None or prompt.on_status is None:
            return None
        say, text = prompt.on_status, reading_status(prompt.tokens)
        return asyncio.get_running_loop().call_later(self.status_after_s, lambda: say(text))

    async def _stream_once(
        self,
        litellm: ModuleType,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_stall: Callable[[str], None],
        answer_cap: int | None = None,
        prompt: PromptInfo | None = None,
    ) -> AssistantTurn:
        def stall(seconds: float) -> None:
            on_stall(f"No response from the model for {seconds:.0f} s…")

        first_timeout = self.first_token_timeout(prompt)
        reading = self._reading_notice(prompt)
        request = litellm.acompletion(**self._params(messages, tools, answer_cap))
        turn = AssistantTurn()
        calls = _ToolCallAccumulator()
        text_parts: list[str] = []
        stream: Any = None
        try:
            stream = await await_within(request, first_timeout, stall, "response")
            iterator = stream.__aiter__()
            timeout = first_timeout
            while True:
                try:
                    chunk = await next_within(iterator, timeout, stall, "data")
                except StopAsyncIteration:
                    break
                if reading is not None:
                    reading.cancel()
                timeout = self.idle_timeout_s
                self._absorb(chunk, turn, calls, text_parts, on_text)
        finally:
            if reading is not None:
                reading.cancel()
            if stream is not None:
                await _close_quietly(stream)
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
            turn.usage.cached_tokens, turn.usage.cache_write_tokens = cache_tokens(usage)
        for choice in as_list(getattr(chunk, "choices", None)):
            delta = getattr(choice, "delta", None)
            if getattr(choice, "finish_reason", None):
                turn.finish_reason = choice.finish_reason
            if delta is None:
                continue
            if getattr(delta, "content", None):
                text = without_surrogates(delta.content)  # the model's text must encode everywhere
                text_parts.append(text)
                on_text(text)
            for tool_delta in as_list(getattr(delta, "tool_calls", None)):
                calls.add(tool_delta)


def as_list(value: Any) -> list[Any]:
    """A provider's optional list field as a typed list."""
    return list(value) if isinstance(value, (list, tuple)) else []  # pyright: ignore[reportUnknownArgumentType]


def _describe(exc: BaseException) -> str:
    status = _status_of(exc)
    name = type(exc).__name__
    return f"{name} (HTTP {status})" if status is not None else name


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(cache reads, cache writes) from a litellm usage object, whichever fields the provider filled."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return int(read), int(written)


def _retry_text(exc: BaseException, wait: float, attempt: int, retry_after: float | None) -> str:
    told = f" (the provider asked for {retry_after:g} s)" if retry_after is not None else ""
    return f"{_describe(exc)}; retrying in {wait:.1f} s{told} (attempt {attempt + 2})"


async def _close_quietly(stream: Any) -> None:
    """Release the HTTP connection of a stream we stop reading (a stall must not leak it)."""
    for target in (stream, getattr(stream, "completion_stream", None)):
        close = getattr(target, "aclose", None)
        if close is None:
            continue
        try:
            await close()
        except Exception:  # closing is best effort; the request already ended
            logging.getLogger(__name__).debug("closing a model stream failed", exc_info=True)
        return


@functools.cache
def _encoding() -> Any:
    _import_litellm()
    from litellm.litellm_core_utils.default_encoding import (  # pyright: ignore[reportMissingTypeStubs]
        encoding,
    )

    return encoding


def count_text_tokens(text: str) -> int:
    """cl100k tokens, with the tokenizer file litellm ships (no network)."""
    return len(_encoding().encode(text, disallowed_special=()))


def model_limits(model: str) -> tuple[int | None, int | None]:
    """(max input tokens, max output tokens) from litellm's model map; None when unknown."""
    litellm = _import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # unknown or local model: the context_window setting decides
        return None, None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return (int(window) if window else None), (
        int(info["max_output_tokens"]) if info.get("max_output_tokens") else None
    )


def token_prices(model: str) -> tuple[float, float] | None:
    """(dollars per prompt token, per answer token) from litellm's model map; None when unknown."""
    litellm = _import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # unknown or local model: no price
        return None
    prompt, answer = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if prompt is None or answer is None:
        return None
    return float(prompt), float(answer)


def _endpoint_params(settings: Settings) -> dict[str, Any]:
    """The api_base setting; a local server needs no key, but the OpenAI client insists on one."""
    if not settings.api_base:
        return {}
    params: dict[str, Any] = {"api_base": settings.api_base}
    if is_local_endpoint(settings.model, settings.api_base) and not os.environ.get("OPENAI_API_KEY"):
        params["api_key"] = "local"
    return params


def llm_client_for(settings: Settings, model: str | None = None) -> LLMClient:
    """A client with the settings' retry bounds and timeouts."""
    retry = RetryPolicy(
        max_retries=settings.max_retries,
        base_delay_s=settings.retry_base_delay_s,
        max_retry_after_s=settings.max_retry_after_s,
        max_total_wait_s=settings.max_retry_wait_s,
    )
    return LLMClient(
        model or settings.model,
        settings.temperature,
        settings.max_tokens,
        retry,
        extra=_endpoint_params(settings),
        first_token_timeout_s=settings.first_token_timeout_s,
        idle_timeout_s=settings.idle_timeout_s,
        local=is_local_endpoint(model or settings.model, settings.api_base),
        prompt_tokens_per_s=settings.local_prompt_tokens_per_s,
    )
