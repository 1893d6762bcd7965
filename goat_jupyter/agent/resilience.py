"""Provider misbehaviour that must never hang a cell: stalls, Retry-After, bounded retries, and which
failures a retry can fix."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")


class StreamTimeoutError(Exception):
    """The model sent nothing for too long (before the first chunk or between chunks)."""


@dataclass
class RetryPolicy:
    """How often and how long to retry; every wait is capped and so is their sum."""

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0  # a provider's Retry-After is honoured up to this
    max_total_wait_s: float = 300.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        return min(self.base_delay_s * (2**attempt), self.max_delay_s) * (0.75 + random.random() / 2)


def _header(exc: BaseException, name: str) -> str | None:
    sources: list[Any] = [
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
    ]
    for source in sources:
        try:
            value: Any = source.get(name) if source is not None else None
        except Exception:  # an SDK's lazy response object may refuse; no header then
            value = None
        if value is not None:
            return str(value)
    return None


def retry_after_seconds(exc: BaseException, now: float | None = None) -> float | None:
    """`retry-after-ms`, else `Retry-After` as seconds or an HTTP date; None when absent/invalid."""
    millis = _header(exc, "retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    raw = _header(exc, "retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


async def next_within(
    iterator: AsyncIterator[T], timeout_s: float, on_stall: Callable[[float], None], what: str
) -> T:
    """The next item, or StreamTimeoutError; StopAsyncIteration passes through to end the caller's loop."""
    return await await_within(iterator.__anext__(), timeout_s, on_stall, what)


async def await_within(
    awaitable: Awaitable[T], timeout_s: float, on_stall: Callable[[float], None], what: str
) -> T:
    """Await with a deadline: `on_stall` fires once at 2/3 of it (a live notice), then StreamTimeoutError."""
    task: asyncio.Future[T] = asyncio.ensure_future(awaitable)
    notice_after = timeout_s * 2 / 3
    try:
        done, _ = await asyncio.wait({task}, timeout=notice_after)
        if not done:
            on_stall(notice_after)
            done, _ = await asyncio.wait({task}, timeout=timeout_s - notice_after)
        if not done:
            raise StreamTimeoutError(f"no {what} from the model within {timeout_s:g} s")
        return task.result()
    finally:
        if not task.done():
            task.cancel()


RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


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


def describe_failure(exc: BaseException) -> str:
    status = _status_of(exc)
    name = type(exc).__name__
    return f"{name} (HTTP {status})" if status is not None else name


def retry_text(exc: BaseException, wait: float, attempt: int, retry_after: float | None) -> str:
    told = f" (the provider asked for {retry_after:g} s)" if retry_after is not None else ""
    return f"{describe_failure(exc)}; retrying in {wait:.1f} s{told} (attempt {attempt + 2})"
