"""The only module that imports litellm: lazily, on a lock, warmed up in the background; and the
lookups that need it (the cl100k tokenizer, model windows and prices)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from types import ModuleType
from typing import Any

_litellm: ModuleType | None = None
_import_lock = threading.Lock()
_warm_started = False
warmed = threading.Event()  # set when the background warm-up has finished (benchmarks wait on it)
imported_at: float | None = None  # time.time() when the import finished: what a first run waits for


def _drop_surrogate_noise(record: logging.LogRecord) -> bool:
    """litellm's own stream log fails on a model's lone surrogate; goat replaces it, so the traceback
    it would print into the cell is noise."""
    return "surrogates not allowed" not in record.getMessage()


def _import_litellm() -> ModuleType:
    global _litellm, imported_at
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
            imported_at = time.time()
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
