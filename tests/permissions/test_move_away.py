"""Move-away then Write-new (issue 32, point 4): a Move takes a file away from its name as a Delete
does, so it asks in default and acceptEdits mode and is denied headless; every shape of the trick
(files, notebooks, folders, links, an existing target, another spelling) is tried against the real
executor with RulePolicy, and the real file system is compared before and after."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.permissions.engine import PermissionContext, evaluate, suggest_rules
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.runner import Executor

TRAIN = "import torch\nprint('the real training script')\n"


class Recorder:
    """Records every prompt and denies it, as a user clicking Deny (or no one clicking) would."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("deny")


def workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "train.py").write_text(TRAIN)
    (ws / "analysis.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    (ws / "src" / "model.py").write_text("MODEL = 1\n")
    (ws / "link.py").symlink_to(ws / "train.py")
    return ws


def executor(ws: Path, mode: PermissionMode, approver: Recorder | None) -> Executor:
    registry = default_registry(cwd=ws)
    registry.session.settings.permission_mode = mode
    for path in filter(Path.is_file, ws.rglob("*")):
        registry.session.file_reads.record(Path(os.path.normpath(path)))
    return Executor(registry, registry.session, policy=RulePolicy(approver))


async def call(runner: Executor, tool: str, args: dict[str, Any]) -> ToolOutput:
    return await runner.run_one(ToolCall(id=f"c{tool}", name=tool, arguments=args))


MOVES = [
    ({"from": "train.py", "to": ".old/train.py"}, "train.py"),
    ({"from": "./train.py", "to": "old_train.py"}, "train.py"),
    ({"from": "src/../train.py", "to": "backup/"}, "train.py"),
    ({"from": "analysis.ipynb", "to": ".old/analysis.ipynb"}, "analysis.ipynb"),
    ({"from": "src", "to": "src_old"}, "src/model.py"),
    ({"from": "src/", "to": ".old/src"}, "src/model.py"),
    ({"from": "link.py", "to": "moved_link.py"}, "link.py"),
]


@pytest.mark.parametrize(("args", "kept"), MOVES)
@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
async def test_move_away_asks_and_a_denial_keeps_the_file(
    tmp_path: Path, args: dict[str, Any], kept: str, mode: PermissionMode
) -> None:
    ws = workspace(tmp_path)
    approver = Recorder()
    runner = executor(ws, mode, approver)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    moved = await call(runner, "Move", args)
    assert moved.is_error and moved.metadata["error_code"] == "PERMISSION_DENIED", moved.content
    assert [r.tool_name for r in approver.requests] == ["Move"]
    assert "removes" in approver.requests[0].reason and approver.requests[0].rules == ()
    assert (ws / kept).exists() and {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
async def test_move_away_then_write_new_never_replaces_unasked_headless(
    tmp_path: Path, mode: PermissionMode
) -> None:
    """The red team's sequence, headless (no approver): the Move is denied, so the Write that follows
    finds the file still there and needs approval too (acceptEdits allows an edit the user chose)."""
    ws = workspace(tmp_path)
    runner = executor(ws, mode, None)
    moved = await call(runner, "Move", {"from": "train.py", "to": ".old/train.py"})
    assert moved.is_error and moved.metadata["error_code"] == "PERMISSION_DENIED", moved.content
    assert not (ws / ".old").exists()
    if mode != "acceptEdits":
        written = await call(runner, "Write", {"file_path": "train.py", "content": "print('evil')\n"})
        assert written.is_error
        assert (ws / "train.py").read_text() == TRAIN


@pytest.mark.parametrize(
    "args",
    [
        {"from": "train.py", "to": "src/model.py", "overwrite": True},  # replaces a file as well
        {"from": "train.py", "to": "fresh.py"},
        {"from": "missing.py", "to": "x.py"},
    ],
)
def test_every_move_asks_in_default_and_accept_edits_and_is_allowed_only_by_move_or_delete_rules(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    ws = workspace(tmp_path)

    def decide(mode: PermissionMode, allow: tuple[str, ...] = ()) -> str:
        context = PermissionContext(ws, mode=mode, allow=allow)
        return evaluate("Move", args, "mutating", context).behavior

    assert decide("default") == decide("acceptEdits") == "ask"
    assert decide("plan") == decide("dontAsk") == "deny"
    assert decide("bypassPermissions") == "allow"
    for rules in (("Edit",), ("Edit(./**)",), ("Write",), ("Edit(train.py)", "Edit(src/**)")):
        assert decide("default", rules) == "ask", rules
    assert decide("default", ("Move",)) == decide("default", ("Delete(./**)",)) == "allow"
    assert decide("default", (f"Move(./{args['from']})",)) == "ask"  # one end is not both
    assert suggest_rules("Move", args, PermissionContext(ws)) == ()


def test_a_move_out_of_the_workspace_asks_even_in_bypass_mode_like_a_delete(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    outside = str(tmp_path / "elsewhere" / "train.py")
    for args in ({"from": "train.py", "to": outside}, {"from": outside, "to": "train2.py"}):
        context = PermissionContext(ws, mode="bypassPermissions")
        assert evaluate("Move", args, "mutating", context).behavior == "ask"
        assert evaluate("Delete", {"path": outside}, "mutating", context).behavior == "ask"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefix=st.sampled_from(["", "./", "src/../", "{ws}/", "{ws}/./"]),
    name=st.sampled_from(["train.py", "analysis.ipynb", "src", "src/model.py", "link.py", "TRAIN.py"]),
    tail=st.sampled_from(["", "/", "/."]),
    to=st.sampled_from([".old/x", "x", "src/new", "{ws}/.old/", "../out/x"]),
    overwrite=st.booleans(),
    mode=st.sampled_from(["default", "acceptEdits"]),
)
def test_no_spelling_of_a_move_runs_unasked(
    tmp_path: Path, prefix: str, name: str, tail: str, to: str, overwrite: bool, mode: PermissionMode
) -> None:
    ws = tmp_path / "ws"
    if not ws.exists():
        workspace(tmp_path)
    args = {"from": (prefix + name + tail).format(ws=ws), "to": to.format(ws=ws), "overwrite": overwrite}
    allow = ("Edit", "Write", "Edit(./**)", "Read")
    assert evaluate("Move", args, "mutating", PermissionContext(ws, mode=mode, allow=allow)).behavior == "ask"
