"""Budgets: a request that could cross a budget is not sent; what is sent is capped to fit."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.spend import (
    MIN_ANSWER_TOKENS,
    BudgetReachedError,
    Limits,
    Prices,
    RunSpend,
    answer_cap,
    budget_status,
)
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import Notice
from tests.agent_helpers import AgentRig, make_agent, text_turn, tool_turn

GPT_4O_MINI = Prices(prompt=0.15e-6, answer=0.6e-6)


def test_no_budget_no_cap() -> None:
    assert answer_cap(Limits(), RunSpend(), 0.0, 10_000, GPT_4O_MINI) is None


def test_cost_cap_is_what_the_budget_still_pays_for() -> None:
    cap = answer_cap(Limits(cost_per_run=0.01), RunSpend(), 0.0, 10_000, GPT_4O_MINI)
    assert cap == int((0.01 - 10_000 * 0.15e-6) / 0.6e-6)


def test_request_that_cannot_afford_a_short_answer_is_refused_with_one_line() -> None:
    spent = RunSpend(cost_usd=0.48)
    with pytest.raises(BudgetReachedError) as stop:
        answer_cap(Limits(cost_per_run=0.5), spent, 0.48, 200_000, GPT_4O_MINI)
    assert str(stop.value) == (
        "Stopped at the budget: $0.48 of $0.50 (max_cost_per_run) · "
        "raise it with %%goat --max-cost 1.00 or %goat config max_cost_per_run=1.00"
    )


def test_session_budget_counts_earlier_runs() -> None:
    run = RunSpend(session_before=4.999)
    with pytest.raises(BudgetReachedError, match="max_cost_per_session"):
        answer_cap(Limits(cost_per_session=5.0), run, run.session_cost, 10_000, GPT_4O_MINI)


def test_token_budget_applies_without_a_price() -> None:
    run = RunSpend(tokens=9_000, unpriced=True)
    assert answer_cap(Limits(tokens_per_run=10_000), run, 0.0, 500, None) == 500
    with pytest.raises(BudgetReachedError, match="max_tokens_per_run"):
        answer_cap(Limits(tokens_per_run=10_000), run, 0.0, 900, None)


def test_cost_budget_without_a_price_caps_nothing() -> None:
    assert answer_cap(Limits(cost_per_run=0.01), RunSpend(), 0.0, 10_000, None) is None


@settings(max_examples=300, deadline=None)
@given(
    limit=st.floats(min_value=0, max_value=5),
    spent=st.floats(min_value=0, max_value=5),
    prompt_tokens=st.integers(min_value=0, max_value=2_000_000),
    prompt_price=st.floats(min_value=0, max_value=1e-4),
    answer_price=st.floats(min_value=1e-9, max_value=1e-3),
)
def test_a_sent_request_never_crosses_the_budget(
    limit: float, spent: float, prompt_tokens: int, prompt_price: float, answer_price: float
) -> None:
    prices = Prices(prompt_price, answer_price)
    run = RunSpend(cost_usd=spent)
    try:
        cap = answer_cap(Limits(cost_per_run=limit), run, spent, prompt_tokens, prices)
    except BudgetReachedError:
        return
    assert cap is not None and cap >= MIN_ANSWER_TOKENS
    worst = spent + prompt_tokens * prompt_price + cap * answer_price
    assert worst <= limit + 1e-9


def test_status_line_names_each_budget() -> None:
    line = budget_status(Limits(0.5, 5.0, 20_000), RunSpend(cost_usd=0.12, tokens=1_234), 1.5)
    assert (
        line == "budget: last run $0.12 of $0.50 · session $1.50 of $5.00 · last run 1,234 of 20,000 tokens"
    )
    assert budget_status(Limits(), None, None) == "budget: none"


def _priced_rig(tmp_path: Path, url: str, **settings_update: object) -> AgentRig:
    rig = make_agent(tmp_path, url)
    rig.agent.llm = LLMClient(
        "openai/gpt-4o-mini",
        retry=RetryPolicy(max_retries=0, base_delay_s=0.01),
        extra={"api_base": url, "api_key": "test-key"},
    )
    rig.session.settings = rig.session.settings.model_copy(update=settings_update)
    return rig


BIG_USAGE = {"prompt_tokens": 30_000, "completion_tokens": 100}  # $0.0046 on gpt-4o-mini


async def test_run_stops_before_the_request_that_would_cross_the_budget(tmp_path: Path) -> None:
    turns = [
        tool_turn("Bash", {"command": "echo one"}, usage=BIG_USAGE),
        tool_turn("Bash", {"command": "echo two"}, usage=BIG_USAGE),
        text_turn("done", usage=BIG_USAGE),
    ]
    with ReplayServer(turns) as server:
        rig = _priced_rig(tmp_path, server.url, max_cost_per_run=0.005)
        result = await rig.agent.run("spend")
        assert len(server.requests) == 1
        sent_cap = server.requests[0].get("max_tokens")
    assert result.stop_reason == "budget"
    assert isinstance(sent_cap, int) and sent_cap < 10_000  # the answer was capped to fit the budget
    stops = [n.text for n in rig.of_type(Notice) if n.text.startswith("Stopped at the budget")]
    assert len(stops) == 1 and "max_cost_per_run" in stops[0]
    # The session stays consistent: every call has its result, and the next prompt runs.
    assert rig.session.messages[-1]["role"] == "tool"
    rig.session.settings = rig.session.settings.model_copy(update={"max_cost_per_run": None})
    with ReplayServer([text_turn("continued")]) as server:
        rig.agent.llm = LLMClient("openai/gpt-4o-mini", extra={"api_base": server.url, "api_key": "k"})
        again = await rig.agent.run("go on")
    assert again.text == "continued"


async def test_unpriced_model_says_cost_unknown_and_token_budget_stops_it(tmp_path: Path) -> None:
    turns = [
        tool_turn("Bash", {"command": "echo x"}, usage={"prompt_tokens": 9_000, "completion_tokens": 50})
    ] * 3
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        rig.session.settings = rig.session.settings.model_copy(
            update={"max_cost_per_run": 0.01, "max_tokens_per_run": 12_000}
        )
        result = await rig.agent.run("go")
        assert len(server.requests) == 1
    texts = [n.text for n in rig.of_type(Notice)]
    assert any("cost of openai/replay is unknown" in t for t in texts)
    assert result.stop_reason == "budget"
    assert any("max_tokens_per_run" in t for t in texts if t.startswith("Stopped at the budget"))


async def test_an_unpriced_model_is_named_once_per_session_not_in_every_cell(tmp_path: Path) -> None:
    """Issue 33 point 13: with a cost budget, the 'cost unknown' warning comes with the first run only."""
    with ReplayServer([text_turn("one"), text_turn("two"), text_turn("three")]) as server:
        rig = make_agent(tmp_path, server.url)
        rig.session.settings = rig.session.settings.model_copy(update={"max_cost_per_run": 1.0})
        for prompt in ("first", "second", "third"):
            await rig.agent.run(prompt)
    said = [n.text for n in rig.of_type(Notice) if "is unknown" in n.text]
    assert len(said) == 1 and "cost of openai/replay is unknown" in said[0]
