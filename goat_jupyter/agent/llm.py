"""The model client: builds each request, streams one assistant turn, and retries what a retry can fix
(litellm itself: litellm_loader.py; the turn's parts: turns.py; retry rules: resilience.py)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from goat_jupyter.agent.context import request_tokens
from goat_jupyter.agent.endpoint import is_local_endpoint, reading_allowance_s, reading_status
from goat_jupyter.agent.litellm_loader import count_text_tokens, litellm_module
from goat_jupyter.agent.meter import Meter, Reservation
from goat_jupyter.agent.provider_errors import (
    MissingCredentialsError,
    kind_of,
    missing_key_text,
    missing_key_variables,
    permanent_error,
    quick_missing_keys,
)
from goat_jupyter.agent.resilience import (
    RetryPolicy,
    await_within,
    describe_failure,
    is_context_overflow,
    is_retryable,
    next_within,
    retry_after_seconds,
    retry_text,
)
from goat_jupyter.agent.turns import AssistantTurn, ToolCallAccumulator, Usage, absorb, estimate_cost
from goat_jupyter.errors import ContextLengthError, LLMError

if TYPE_CHECKING:
    from goat_jupyter.settings import Settings

__all__ = ["LLMClient", "Meter", "MeteredClient", "PromptInfo", "RetryPolicy", "llm_client_for"]

UNREACHABLE_RETRY_S = 0.5


@dataclass
class PromptInfo:
    """What the loop knows about a request before sending it: its size, and where status goes."""

    tokens: int
    on_status: Callable[[str], None] | None = None


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
        meter: Meter,
        on_discard: Callable[[int], None] | None = None,
        prompt: PromptInfo | None = None,
    ) -> AssistantTurn:
        """One turn, each attempt reserved on `meter` (its budgets cap max_tokens) before it is sent;
        `on_discard(chars)` takes back the text a failed attempt streamed before its retry."""
        self.check_key()
        litellm = await litellm_module()
        stalled = on_stall or on_retry
        started = time.monotonic()
        waited = 0.0
        attempt = 0
        missing = missing_key_variables(litellm, self.model, self.extra)
        if missing:  # no request: it could only fail, and litellm would call that an HTTP 500
            raise MissingCredentialsError(missing_key_text(self.model, missing))
        tokens = prompt.tokens if prompt is not None else request_tokens(messages, tools or [])
        while True:
            shown = _CountingSink(on_text)
            reservation = await meter.reserve(self.model, tokens, self.max_tokens)
            try:
                return await self._attempt(litellm, messages, tools, shown, stalled, reservation, prompt)
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
                on_retry(retry_text(exc, wait, attempt, retry_after_seconds(exc)))
                await asyncio.sleep(wait)
                waited += wait
                attempt += 1

    def metered(self, meter: Meter) -> MeteredClient:
        """This client with its meter bound, for a caller that only asks (a WebFetch page summary)."""
        return MeteredClient(self, meter)

    async def _attempt(
        self,
        litellm: ModuleType,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_stall: Callable[[str], None],
        reservation: Reservation,
        prompt: PromptInfo | None,
    ) -> AssistantTurn:
        """One request; its reservation ends with it, however it ends, charged what it used."""
        partial = _Partial()
        try:
            await self._stream_once(
                litellm, messages, tools, on_text, on_stall, reservation.cap, prompt, partial
            )
        finally:
            reservation.settle(self._charged(litellm, partial, reservation.prompt_tokens))
        return partial.turn

    def _charged(self, litellm: ModuleType, partial: _Partial, prompt_tokens: int) -> Usage:
        """The provider's usage; without it (cut off, or a provider that sends none) an estimate
        from what streamed; nothing for a request that got no answer at all."""
        usage = partial.turn.usage
        if not (usage.prompt_tokens or usage.completion_tokens):
            if not partial.chunks:
                return Usage(cost_usd=0.0)
            usage = partial.turn.usage = Usage(prompt_tokens, count_text_tokens(partial.streamed()))
        usage.cost_usd = estimate_cost(litellm, self.model, usage)
        return usage

    def check_key(self) -> None:
        """Raise MissingCredentialsError when a well-known provider's key is not set: said at once,
        before the model library loads (seconds on a kernel's first run)."""
        missing = quick_missing_keys(self.model, self.extra)
        if missing:
            raise MissingCredentialsError(missing_key_text(self.model, missing))

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
            f"{elapsed_s:.0f} s: {describe_failure(exc)}: {exc}. The provider may be overloaded or down: run "
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
        answer_cap: int | None,
        prompt: PromptInfo | None,
        partial: _Partial,
    ) -> None:
        def stall(seconds: float) -> None:
            on_stall(f"No response from the model for {seconds:.0f} s…")

        first_timeout = self.first_token_timeout(prompt)
        reading = self._reading_notice(prompt)
        request = litellm.acompletion(**self._params(messages, tools, answer_cap))
        turn = partial.turn
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
                partial.chunks += 1
                absorb(chunk, turn, partial.calls, partial.text_parts, on_text)
        finally:
            if reading is not None:
                reading.cancel()
            if stream is not None:
                await _close_quietly(stream)
        turn.text = "".join(partial.text_parts)
        turn.tool_calls = partial.calls.result()


@dataclass
class _Partial:
    """A turn as it streams in, so a request cut off still says what it used."""

    turn: AssistantTurn = field(default_factory=AssistantTurn)
    calls: ToolCallAccumulator = field(default_factory=ToolCallAccumulator)
    text_parts: list[str] = field(default_factory=lambda: list[str]())
    chunks: int = 0

    def streamed(self) -> str:
        calls = "".join(call.name + call.arguments for call in self.calls.result())
        return "".join(self.text_parts) + calls


@dataclass
class MeteredClient:
    """An LLMClient bound to a meter: web/summarize.py's PageModel."""

    client: LLMClient
    meter: Meter

    @property
    def model(self) -> str:
        return self.client.model

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None],
    ) -> AssistantTurn:
        return await self.client.complete(messages, tools, on_text, on_retry, meter=self.meter)


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
