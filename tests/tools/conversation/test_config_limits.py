"""Issue 32 point 7: the model's Config tool may lower any limit unasked, never raise or remove one.

The limits are the settings model's own (Scope.LIMIT), so every budget, max_cost_per_user_per_day
included, and any budget added later, is covered without a list to keep in step. Each attempt goes
through the real executor and permission policy with an approver that records and denies.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from goat_jupyter.config.model import LIMIT, fields_of
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.settings import RUNTIME_KEYS, PermissionMode
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.runner import Executor

RUNTIME_LIMITS = [name for name in fields_of(LIMIT) if name in RUNTIME_KEYS]
CURRENT: dict[str, float] = {name: 10 for name in RUNTIME_LIMITS}


class Denier:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("deny")


async def config(
    tmp_path: Path, mode: PermissionMode, setting: str, value: object
) -> tuple[ToolOutput, Denier, dict[str, object]]:
    registry = default_registry(cwd=tmp_path)
    session = registry.session
    session.settings = session.settings.model_copy(update={**CURRENT, "permission_mode": mode})
    denier = Denier()
    out = await Executor(registry, session, policy=RulePolicy(denier)).run_one(
        ToolCall("c1", "Config", {"setting": setting, "value": value})
    )
    return out, denier, {name: getattr(session.settings, name) for name in RUNTIME_LIMITS}


def test_every_budget_is_a_limit_the_config_tool_guards() -> None:
    expected = {"max_turns", "max_tokens", "max_cost_per_run", "max_cost_per_session"}
    assert expected | {"max_tokens_per_run", "max_cost_per_user_per_day"} <= set(RUNTIME_LIMITS)


@pytest.mark.parametrize("mode", ["default", "bypassPermissions", "dontAsk"])
@pytest.mark.parametrize("name", RUNTIME_LIMITS)
@pytest.mark.parametrize("value", [11, "10.5", "none", "null", "", "nan", "1e309"])
async def test_raising_or_removing_any_limit_asks_the_user(
    tmp_path: Path, mode: PermissionMode, name: str, value: object
) -> None:
    out, denier, after = await config(tmp_path, mode, name, value)
    assert out.is_error and after == CURRENT, out.content
    assert mode == "dontAsk" or denier.requests, "the user is asked (dontAsk denies outright)"


@pytest.mark.parametrize("name", RUNTIME_LIMITS)
@pytest.mark.parametrize("spelling", [str.upper, lambda s: s.replace("_", "-"), lambda s: f" {s} "])
async def test_other_spellings_of_a_limit_are_refused_or_asked(
    tmp_path: Path, name: str, spelling: Callable[[str], str]
) -> None:
    out, _, after = await config(tmp_path, "bypassPermissions", spelling(name), "none")
    assert after == CURRENT, out.content


@pytest.mark.parametrize("name", RUNTIME_LIMITS)
async def test_lowering_any_limit_does_not_ask(tmp_path: Path, name: str) -> None:
    out, denier, after = await config(tmp_path, "default", name, 3)
    assert not out.is_error and not denier.requests, out.content
    assert after == {**CURRENT, name: 3}
