"""Failures no retry can fix end at once, in one sentence naming what to set and where (issue 22, point 1)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from goat_jupyter.agent.llm import LLMClient
from goat_jupyter.agent.meter import Meter
from goat_jupyter.agent.provider_errors import (
    EndpointUnreachableError,
    MissingCredentialsError,
    RejectedKeyError,
    UnknownModelError,
)
from goat_jupyter.agent.resilience import RetryPolicy
from goat_jupyter.agent.spend import RunSpend
from goat_jupyter.errors import LLMError
from goat_jupyter.replay import ReplayServer
from goat_jupyter.ui.failure import explain_exception, failure_bundle

KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*KEY_VARIABLES, "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def _call(client: LLMClient) -> tuple[list[str], BaseException]:
    retries: list[str] = []

    async def go() -> None:
        await client.complete(
            [{"role": "user", "content": "hi"}],
            None,
            lambda _t: None,
            retries.append,
            meter=Meter(RunSpend()),
        )

    with pytest.raises(LLMError) as caught:
        asyncio.run(go())
    return retries, caught.value


def _policy() -> RetryPolicy:
    return RetryPolicy(max_retries=4, base_delay_s=0.01)


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("gpt-4o-mini", "OPENAI_API_KEY"),
        ("openai/replay", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("mistral/mistral-large-latest", "MISTRAL_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
    ],
)
def test_a_missing_key_is_named_before_any_request(model: str, variable: str) -> None:
    with ReplayServer([{"text": "never sent"}]) as server:
        client = LLMClient(model, retry=_policy(), extra={"api_base": server.url})
        retries, error = _call(client)
        assert len(server.remaining) == 1, "no request was made"
    assert isinstance(error, MissingCredentialsError) and retries == []
    sentence, _full = explain_exception(error, model)
    assert variable in sentence and "goat settings" in sentence and model in sentence
    assert "HTTP 500" not in sentence and "overloaded" not in sentence
    assert sentence.count(". ") == 0, "one sentence"


def test_an_empty_key_fails_at_once_without_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    # litellm counts an empty variable as set; the SDK then refuses before any request.
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with ReplayServer([{"text": "never sent"}]) as server:
        retries, error = _call(LLMClient("openai/replay", retry=_policy(), extra={"api_base": server.url}))
    assert isinstance(error, MissingCredentialsError) and retries == []
    assert "OPENAI_API_KEY" in str(error)


def test_a_key_given_to_the_client_is_not_asked_for() -> None:
    with ReplayServer([{"text": "fine"}]) as server:
        client = LLMClient("openai/replay", retry=_policy(), extra={"api_base": server.url, "api_key": "k"})
        turn = asyncio.run(
            client.complete(
                [{"role": "user", "content": "hi"}], None, lambda _t: None, print, meter=Meter(RunSpend())
            )
        )
    assert turn.text == "fine"


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, RejectedKeyError, "rejected the API key"),
        (403, RejectedKeyError, "rejected the API key"),
        (404, UnknownModelError, "does not know the model"),
    ],
)
def test_a_refused_key_or_unknown_model_is_not_retried(status: int, kind: type[LLMError], words: str) -> None:
    turns: list[dict[str, Any]] = [{"error": {"status": status, "message": "no"}}, {"text": "unused"}]
    with ReplayServer(turns) as server:
        client = LLMClient("openai/replay", retry=_policy(), extra={"api_base": server.url, "api_key": "bad"})
        retries, error = _call(client)
        assert len(server.remaining) == 1, "one request only"
    assert isinstance(error, kind) and retries == [] and words in str(error)
    assert "goat settings" in str(error)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_retried_once_then_named() -> None:
    port = _closed_port()
    client = LLMClient(
        "openai/replay", retry=_policy(), extra={"api_base": f"http://127.0.0.1:{port}/v1", "api_key": "k"}
    )
    retries, error = _call(client)
    assert isinstance(error, EndpointUnreachableError)
    assert len(retries) == 1 and "connection refused" in retries[0] and "HTTP" not in retries[0]
    assert f"127.0.0.1:{port}" in str(error) and "OPENAI_API_BASE" in str(error)
    assert "HTTP 500" not in str(error)


def test_the_cell_shows_the_sentence_and_folds_the_providers_text() -> None:
    with ReplayServer([{"text": "never sent"}]) as server:
        _retries, error = _call(LLMClient("gpt-4o-mini", retry=_policy(), extra={"api_base": server.url}))
    sentence, full = explain_exception(error, "gpt-4o-mini")
    bundle = failure_bundle(sentence, full)
    assert bundle["text/plain"].startswith("✗ No API key for gpt-4o-mini: set OPENAI_API_KEY")
    assert "<details>" not in bundle["text/html"], "nothing more to unfold for a key check"


QUICK_MODELS = [
    "gpt-4o-mini",
    "gpt-5",
    "o3-mini",
    "o1",
    "openai/replay",
    "openai/gpt-4o",
    "anthropic/claude-sonnet-4-5",
    "gemini/gemini-1.5-pro",
    "mistral/mistral-large-latest",
    "groq/llama3-8b-8192",
    "openrouter/meta/llama-3",
    "deepseek/deepseek-chat",
    "claude-3-5-sonnet-20241022",  # bare names of other families: only litellm can tell
    "chatgpt-4o-latest",
    "ollama/llama3",
    "azure/gpt-4o",
    "bedrock/anthropic.claude-v2",
    "Openai/gpt-4o",
    "",
]


@pytest.mark.parametrize("model", QUICK_MODELS)
@pytest.mark.parametrize("keys", [(), ("OPENAI_API_KEY",), ("GOOGLE_API_KEY",), KEY_VARIABLES])
def test_the_check_without_litellm_agrees_with_litellm(
    model: str, keys: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 point 9: the quick check (no litellm import) never says more, or other, than litellm."""
    from goat_jupyter.agent.litellm_loader import _import_litellm  # pyright: ignore[reportPrivateUsage]
    from goat_jupyter.agent.provider_errors import missing_key_variables, quick_missing_keys

    for name in keys:
        monkeypatch.setenv(name, "sk-test-value")
    quick = quick_missing_keys(model, {})
    if quick is not None:
        assert sorted(quick) == sorted(missing_key_variables(_import_litellm(), model, {}))
    assert quick_missing_keys(model, {"api_key": "local"}) in ([], None)


def test_an_empty_variable_is_not_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from goat_jupyter.agent.provider_errors import quick_missing_keys

    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert quick_missing_keys("gpt-4o-mini", {}) == ["OPENAI_API_KEY"]
    assert quick_missing_keys("gpt-4o-mini", {}, {"OPENAI_API_KEY": "sk-x"}) == []
