"""Properties of the crash-safety and retry rules (issue 11), fuzzed with hypothesis."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.agent.context import prune_point, pruned_view
from goat_jupyter.agent.history import repaired
from goat_jupyter.agent.llm import LLMClient
from goat_jupyter.agent.meter import Meter
from goat_jupyter.agent.resilience import RetryPolicy, retry_after_seconds
from goat_jupyter.agent.session import Session, load_session
from goat_jupyter.agent.spend import RunSpend
from goat_jupyter.errors import LLMError
from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import assert_history_valid

IDS = ["a", "b", "c", "d"]


def call_message(ids: list[str]) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "Read", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


message = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=20)),
    st.builds(lambda t: {"role": "assistant", "content": t}, st.text(max_size=20)),
    st.builds(call_message, st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True)),
    st.builds(
        lambda i, t: {"role": "tool", "tool_call_id": i, "content": t},
        st.sampled_from(IDS),
        st.text(max_size=300),
    ),
)


@settings(deadline=None)
@given(st.lists(message, max_size=25))
def test_any_history_is_repaired_into_a_valid_one(messages: list[dict[str, Any]]) -> None:
    fixed, added, _dropped = repaired(messages)
    assert_history_valid(fixed)
    assert all(m in fixed for m in added)


@settings(deadline=None)  # the first example loads the tokenizer
@given(st.lists(message, max_size=25), st.integers(min_value=0, max_value=400))
def test_pruning_never_separates_a_call_from_its_result(messages: list[dict[str, Any]], keep: int) -> None:
    fixed, _, _ = repaired(messages)
    view = pruned_view(fixed, prune_point(fixed, keep))
    assert len(view) == len(fixed)
    assert_history_valid(view)
    assert [m.get("tool_call_id") for m in view] == [m.get("tool_call_id") for m in fixed]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_session_file_cut_anywhere_resumes_into_a_valid_history(
    tmp_path: Path, data: st.DataObject
) -> None:
    folder = tmp_path / data.draw(st.uuids()).hex
    session = Session(workspace=folder)
    for item in data.draw(st.lists(message, min_size=1, max_size=12)):
        session.append(item)
    session.release()
    raw = session.path.read_bytes()
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)))
    session.path.write_bytes(raw[:cut] + data.draw(st.binary(max_size=8)))
    resumed = load_session(session.path, folder)
    assert_history_valid(resumed.messages)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({"retry-after": "-5"}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    class Response:
        def __init__(self) -> None:
            self.headers = headers

    error = Exception("limited")
    error.response = Response()  # type: ignore[attr-defined]
    assert retry_after_seconds(error) == expected


def test_an_http_date_retry_after_counts_from_now() -> None:
    error = Exception("limited")
    error.headers = {"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}  # type: ignore[attr-defined]
    assert retry_after_seconds(error, now=1445412480.0) == 10.0


def test_retry_after_is_capped_and_the_total_wait_bounded() -> None:
    policy = RetryPolicy(max_retries=10, max_retry_after_s=0.2, max_total_wait_s=0.5)
    assert policy.delay(0, 120) == 0.2
    limited = {"error": {"status": 429, "message": "slow down", "retry_after": 120}}
    notices: list[str] = []
    with ReplayServer([limited] * 10) as server:
        client = LLMClient("openai/replay", retry=policy, extra={"api_base": server.url, "api_key": "k"})
        with pytest.raises(LLMError, match="run the cell again later"):
            asyncio.run(
                client.complete(
                    [{"role": "user", "content": "hi"}],
                    None,
                    lambda _t: None,
                    notices.append,
                    meter=Meter(RunSpend()),
                )
            )
        made = len(server.requests)
    assert made == 3 and all("the provider asked for 120 s" in n for n in notices), notices


def test_usage_line_keeps_cached_tokens_across_resume(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path)
    session.append({"role": "user", "content": "hi"})
    session.record("usage", prompt_tokens=100, completion_tokens=5, cost_usd=0.01, cached_tokens=80)
    session.release()
    assert load_session(session.path, tmp_path).usage.cached_tokens == 80
    assert json.loads(session.path.read_text().splitlines()[-1])["cached_tokens"] == 80
