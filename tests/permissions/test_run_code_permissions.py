"""RunCode through a real Executor and RulePolicy: without isolation (bubblewrap missing) or with the
network on, every call asks the user, in every mode, and no rule or earlier answer covers the next one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.processes.sandbox import BWRAP_ENV, isolation
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.runner import Executor

MODES: list[PermissionMode] = ["default", "acceptEdits", "bypassPermissions"]
needs_bwrap = pytest.mark.skipif(not isolation().isolated, reason=f"no sandbox here: {isolation().reason}")


class RecordingApprover:
    """A real Approver: records every prompt and answers with `choice`."""

    def __init__(self, choice: Any = "deny") -> None:
        self.choice = choice
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(self.choice)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat_home"))
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(BWRAP_ENV, str(tmp_path / "missing" / "bwrap"))


def executor_for(ws: Path, approver: RecordingApprover | None, mode: PermissionMode) -> Executor:
    registry = default_registry(cwd=ws)
    registry.session.settings.permission_mode = mode
    registry.session.settings.permissions.allow.append("RunCode")
    return Executor(registry, registry.session, policy=RulePolicy(approver))


async def run(executor: Executor, **args: Any) -> ToolOutput:
    return await executor.run_one(ToolCall("c1", "RunCode", {"language": "bash", "code": "echo ran", **args}))


@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize("mode", MODES)
async def test_not_isolated_asks_in_every_mode_despite_an_allow_rule(ws: Path, mode: PermissionMode) -> None:
    approver = RecordingApprover("deny")
    out = await run(executor_for(ws, approver, mode))
    assert out.is_error and "ran" not in out.content
    [request] = approver.requests
    assert "NOT isolated" in request.reason and "bubblewrap" in request.reason
    assert request.suggested_rule is None  # only "allow once": no rule can cover the next call


@pytest.mark.usefixtures("no_bwrap")
async def test_not_isolated_allowed_once_runs_labelled_and_asks_again(ws: Path) -> None:
    approver = RecordingApprover("allow_session")
    executor = executor_for(ws, approver, "bypassPermissions")
    first = await run(executor)
    second = await run(executor)
    assert len(approver.requests) == 2
    for out in (first, second):
        assert not out.is_error, out.content
        assert "Isolation: NOT ISOLATED" in out.content and "bubblewrap sandbox" not in out.content


@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk"])
async def test_not_isolated_headless_or_dont_ask_is_denied(ws: Path, mode: PermissionMode) -> None:
    out = await run(executor_for(ws, None, mode))
    assert out.is_error and "NOT isolated" in out.content and "ran" not in out.content


@needs_bwrap
@pytest.mark.parametrize("mode", MODES)
async def test_network_true_asks_every_time(ws: Path, mode: PermissionMode) -> None:
    approver = RecordingApprover("deny")
    out = await run(executor_for(ws, approver, mode), network=True)
    assert out.is_error and "ran" not in out.content
    [request] = approver.requests
    assert "network" in request.reason and request.suggested_rule is None


@needs_bwrap
async def test_isolated_runcode_follows_the_normal_rules(ws: Path) -> None:
    approver = RecordingApprover("deny")
    out = await run(executor_for(ws, approver, "default"))  # the allow rule `RunCode` covers it
    assert approver.requests == []
    assert not out.is_error and "Isolation: bubblewrap sandbox" in out.content
