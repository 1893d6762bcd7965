"""Managed settings in a real kernel (issue 26): a managed file with a disabled tool, a model
allow-list, a deny rule, a maximum mode and budgets. The user's file, the project's file, the
environment, `%goat config` and `%%goat` options try to go beyond each one and are refused with the
managed reason; `%goat status` lists what is managed; the daily budget reads the user's ledger."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env, trust_workspace

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

POLICY = {
    "allowed_models": ["openai/replay", "openai/gpt-4o*"],
    "disabled_tools": ["WebFetch"],
    "max_permission_mode": "acceptEdits",
    "permissions": {"deny": ["Bash(curl:*)"]},
    "max_cost_per_run": 0.5,
    "max_cost_per_user_per_day": 0.01,
}
BIG = {"prompt_tokens": 30_000, "completion_tokens": 100}  # $0.0046 a request on gpt-4o-mini
TURNS = [
    tool_turn("WebFetch", {"url": "http://127.0.0.1:9/", "prompt": "x"}, match="[fetch]"),
    text_turn("Fetched nothing.", match="[fetch]"),
    tool_turn("Bash", {"command": "curl http://127.0.0.1:9/"}, match="[curl]"),
    text_turn("Denied.", match="[curl]"),
    text_turn("Spent.", usage=BIG, match="[spend]"),
    text_turn("Never sent.", usage=BIG, match="[day]"),
]
MANAGED = "the managed policy ("


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("managed") / "home"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, home: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    root = tmp_path_factory.mktemp("policy")
    (root / "managed-settings.json").write_text(json.dumps(POLICY))
    workspace = root / "ws"
    prepare_workspace(workspace)
    (workspace / ".goat" / "settings.json").write_text(
        json.dumps({"retry_base_delay_s": 0.01, "max_cost_per_run": 9, "max_cost_per_user_per_day": None})
    )
    env = replay_kernel_env(home, server.url, mode="bypassPermissions")  # beyond the maximum
    env["GOAT_MANAGED_DIR"] = str(root)
    user = {"permissions": {"allow": ["Bash(curl:*)", "WebFetch"]}, "max_cost_per_user_per_day": 100}
    (home / "settings.json").write_text(json.dumps(user))
    trust_workspace(workspace, home)
    async with KernelSession(workspace, env) as session:
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.messages
        yield session


def shown(result: object) -> str:
    return result.text("text/plain") + result.text("text/markdown") + result.stdout  # type: ignore[attr-defined]


async def test_status_lists_the_policy_and_what_it_refused(kernel: KernelSession) -> None:
    status = (await kernel.execute("%goat status")).stdout
    assert f"managed by {MANAGED}" in status, status
    for line in (
        "allowed_models = ['openai/replay', 'openai/gpt-4o*']",
        "disabled_tools = ['WebFetch']",
        "max_permission_mode = 'acceptEdits'",
        "permissions.deny = ['Bash(curl:*)']",
        "max_cost_per_user_per_day = 0.01",
    ):
        assert line in status, status
    assert "mode default" in status  # the environment's bypassPermissions was refused
    assert "refused: Permission mode 'bypassPermissions' is beyond acceptEdits" in status
    assert "refused: max_cost_per_run=9 is above 0.5" in status  # the project's file
    # the project asked for no limit: a project file may only lower the user's 100, which the policy caps
    assert "ignored: .goat/settings.json sets max_cost_per_user_per_day = null (no limit)" in status
    assert "refused: max_cost_per_user_per_day=100 is above 0.01" in status


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("permission_mode=bypassPermissions", "is beyond acceptEdits"),
        ("model=anthropic/claude-opus-4", "is not allowed by"),
        ("max_cost_per_run=1", "is above 0.5"),
        ("max_cost_per_user_per_day=none", "is above 0.01"),
    ],
)
async def test_goat_config_cannot_go_beyond(kernel: KernelSession, change: str, words: str) -> None:
    out = (await kernel.execute(f"%goat config {change}")).stdout
    assert words in out and MANAGED in out, out


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ("--model anthropic/claude-opus-4", "is not allowed by"),
        ("--mode bypassPermissions", "is beyond acceptEdits"),
        ("--max-cost 3", "is above 0.5"),
    ],
)
async def test_cell_options_cannot_go_beyond(
    kernel: KernelSession, server: ReplayServer, options: str, words: str
) -> None:
    before = len(server.requests)
    result = await kernel.execute(f"%%goat {options}\nhello", timeout=60)
    assert words in result.stdout and MANAGED in result.stdout, shown(result)
    assert len(server.requests) == before  # nothing was sent


async def test_a_disabled_tool_is_not_offered_and_refused(
    kernel: KernelSession, server: ReplayServer
) -> None:
    assert "acceptEdits" in (await kernel.execute("%goat config permission_mode=acceptEdits")).stdout
    result = await kernel.execute("%%goat\n[fetch] fetch it", timeout=90)
    assert result.status == "ok", result.error
    offered = {t["function"]["name"] for t in server.requests[-1].get("tools") or []}
    assert offered and "WebFetch" not in offered and "Read" in offered
    tool_result = str(server.requests[-1]["messages"])
    assert "WebFetch is disabled by the managed policy (" in tool_result, tool_result


async def test_a_managed_deny_rule_beats_the_users_allow_rule(
    kernel: KernelSession, server: ReplayServer
) -> None:
    result = await kernel.execute("%%goat\n[curl] fetch it", timeout=90)
    assert result.status == "ok", result.error
    tool_result = str(server.requests[-1]["messages"])
    assert "Bash(curl:*) in permissions.deny of the managed policy (" in tool_result, tool_result


async def test_the_daily_budget_counts_in_the_users_ledger_and_stops(
    kernel: KernelSession, server: ReplayServer, home: Path
) -> None:
    result = await kernel.execute("%%goat --model openai/gpt-4o-mini\n[spend] go", timeout=90)
    assert "Spent." in shown(result), shown(result)
    ledger = home / "usage" / "daily-cost.json"
    ((day, spent),) = json.loads(ledger.read_text()).items()
    assert spent == pytest.approx(0.0046, abs=0.0002)
    ledger.write_text(json.dumps({day: 0.0099}))  # as another kernel of this user would have spent
    before = len(server.requests)
    stopped = await kernel.execute("%%goat --model openai/gpt-4o-mini\n[day] go", timeout=90)
    text = shown(stopped)
    assert len(server.requests) == before  # the next request could cross $0.01: not sent
    assert text.count("Stopped at the budget") == 1 and "(max_cost_per_user_per_day)" in text, text
    assert MANAGED in text
    status = (await kernel.execute("%goat status")).stdout
    assert "today $0.0099 of $0.0100" in status, status
