"""Budgets and per-cell overrides in a real kernel: a run stops at its budget with one line,
`%goat status` shows the spend, the next cell goes on; a per-cell --mode never sticks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

BIG = {"prompt_tokens": 30_000, "completion_tokens": 100}  # $0.0046 a request on gpt-4o-mini
TURNS = [
    tool_turn("Bash", {"command": "echo one"}, usage=BIG, match="[priced]"),
    tool_turn("Bash", {"command": "echo two"}, usage=BIG, match="[priced]"),
    text_turn("Went on.", match="[go on]"),
    tool_turn(
        "Bash", {"command": "echo t"}, usage={"prompt_tokens": 9_000, "completion_tokens": 9}, match="[tok]"
    ),
    tool_turn("Bash", {"command": "echo t2"}, match="[tok]"),
    tool_turn("ExitPlanMode", {"plan": "# Plan\n1. Do it"}, match="[plan]"),
    text_turn("Planned.", match="[plan]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("budget")
    prepare_workspace(workspace)
    env = replay_kernel_env(workspace.parent / "home", server.url, mode="default")
    async with KernelSession(workspace, env) as session:
        loaded = await session.execute(
            "%load_ext goat_jupyter\n%goat config permission_mode=bypassPermissions"
        )
        assert loaded.status == "ok", loaded.messages
        yield session


def requests_with(server: ReplayServer, marker: str) -> int:
    return sum(1 for r in server.requests if marker in str(r["messages"][1:]))


def shown(result: object) -> str:
    return result.text("text/plain") + result.text("text/markdown") + result.stdout  # type: ignore[attr-defined]


async def test_cost_budget_stops_before_the_request_that_would_cross_it(
    kernel: KernelSession, server: ReplayServer
) -> None:
    assert (await kernel.execute("%goat config max_cost_per_run=0.005")).status == "ok"
    result = await kernel.execute("%%goat --model openai/gpt-4o-mini\n[priced] spend", timeout=90)
    assert result.status == "ok", result.error
    assert requests_with(server, "[priced]") == 1
    text = shown(result)
    assert text.count("Stopped at the budget") == 1, text
    assert "$0.0046 of $0.0050 (max_cost_per_run)" in text
    status = await kernel.execute("%goat status")
    assert "budget: last run $0.0046 of $0.0050" in status.stdout, status.stdout
    after = await kernel.execute(
        "%%goat --model openai/gpt-4o-mini --max-cost 1\n[go on] continue", timeout=90
    )
    assert after.status == "ok", after.error
    assert "Went on." in shown(after)
    again = await kernel.execute("%goat status")
    assert (
        "budget: last run" in again.stdout and "of $0.0050" in again.stdout
    )  # the per-cell budget was dropped


async def test_token_budget_stops_an_unpriced_model(kernel: KernelSession, server: ReplayServer) -> None:
    result = await kernel.execute("%%goat --max-tokens 12000\n[tok] go", timeout=90)
    assert result.status == "ok", result.error
    text = shown(result)
    assert "cost of openai/replay is unknown" in text
    assert "Stopped at the budget" in text and "max_tokens_per_run" in text
    assert requests_with(server, "[tok]") == 1


async def test_per_cell_plan_mode_never_becomes_the_session_mode(kernel: KernelSession) -> None:
    assert (await kernel.execute("%goat config permission_mode=default")).status == "ok"
    cell = asyncio.ensure_future(kernel.execute("%%goat --mode plan\n[plan] plan it", timeout=90))
    try:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Approve, auto-accept edits"))
        result = await asyncio.wait_for(cell, 90)
    finally:
        if not cell.done():
            await kernel.interrupt()
    assert result.status == "ok", result.error
    status = await kernel.execute("%goat status")
    assert "mode default" in status.stdout, status.stdout
