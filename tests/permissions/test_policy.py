"""RulePolicy through a real Executor: approvals, session and saved rules, headless denials."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.config.trust import folder_state, trust_folder
from goat_jupyter.permissions.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    RulePolicy,
    StdinApprover,
    save_allow_rule,
)
from goat_jupyter.settings import load_settings
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.mcp.mcp_tool import McpTool
from goat_jupyter.tools.runner import Executor


class ScriptedApprover:
    """A real Approver that answers from a script and records what it was asked."""

    def __init__(self, *answers: ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class BrokenApprover:
    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        raise RuntimeError("widget comm closed")


class FakeMcpClient:
    async def call_tool(self, server: str, tool: str, args: dict[str, Any], ctx: Any) -> str:
        return f"{server}.{tool} done"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat_home"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("original\n")
    return root


def executor_for(ws: Path, policy: RulePolicy) -> tuple[Executor, SessionState]:
    registry = default_registry(cwd=ws)
    registry.register(McpTool("db", "drop", "Drop a table.", {}, {"destructiveHint": True}, FakeMcpClient()))
    return Executor(registry, registry.session, policy=policy), registry.session


_ids = iter(range(1_000_000))


async def run(executor: Executor, tool: str, args: dict[str, Any]) -> ToolOutput:
    return await executor.run_one(ToolCall(f"call{next(_ids)}", tool, args))


async def overwrite(executor: Executor, ws: Path, content: str) -> ToolOutput:
    await run(executor, "Read", {"file_path": str(ws / "a.txt")})
    return await run(executor, "Write", {"file_path": str(ws / "a.txt"), "content": content})


async def test_allow_once_runs_the_call_and_the_request_describes_it(ws: Path) -> None:
    approver = ScriptedApprover(ApprovalAnswer("allow_once"))
    executor, session = executor_for(ws, RulePolicy(approver))
    out = await overwrite(executor, ws, "new\n")
    assert not out.is_error and (ws / "a.txt").read_text() == "new\n"
    [request] = approver.requests  # the Read ran without asking
    assert request.tool_name == "Write" and request.preview_kind == "diff"
    assert request.suggested_rule == "Edit(./a.txt)" and "overwrite" in request.reason
    assert request.args["content"] == "new\n" and request.tool_call_id.startswith("call")
    assert request.risk == "medium" and str(ws / "a.txt") in request.title
    assert session.session_rules == []


async def test_deny_sends_the_users_feedback_to_the_model(ws: Path) -> None:
    approver = ScriptedApprover(ApprovalAnswer("deny", feedback="write to b.txt instead"))
    executor, _ = executor_for(ws, RulePolicy(approver))
    out = await overwrite(executor, ws, "new\n")
    assert out.is_error and out.error_code == "PERMISSION_DENIED"
    assert (
        "The user denied this Write call" in out.content
        and "Their feedback: write to b.txt instead" in out.content
    )
    assert (ws / "a.txt").read_text() == "original\n"


async def test_allow_for_session_adds_a_session_rule(ws: Path) -> None:
    approver = ScriptedApprover(ApprovalAnswer("allow_session"))
    executor, session = executor_for(ws, RulePolicy(approver))
    assert not (await overwrite(executor, ws, "one\n")).is_error
    assert not (await run(executor, "Write", {"file_path": str(ws / "a.txt"), "content": "two\n"})).is_error
    assert len(approver.requests) == 1 and session.session_rules == ["Edit(./a.txt)"]
    assert (ws / "a.txt").read_text() == "two\n" and not (ws / ".goat" / "settings.json").exists()


async def test_always_allow_saves_the_rule_and_keeps_other_settings(ws: Path) -> None:
    settings_file = ws / ".goat" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(
        json.dumps({"model": "m1", "permissions": {"deny": ["Bash(rm:*)"]}, "x": {"k": 1}})
    )
    approver = ScriptedApprover(ApprovalAnswer("always_allow"))
    executor, session = executor_for(ws, RulePolicy(approver))
    session.settings = load_settings(ws, environ={})
    assert not (await overwrite(executor, ws, "one\n")).is_error
    assert not (await run(executor, "Write", {"file_path": str(ws / "a.txt"), "content": "two\n"})).is_error
    assert len(approver.requests) == 1 and "Edit(./a.txt)" in session.settings.permissions.allow
    saved = json.loads(settings_file.read_text())
    assert saved == {
        "model": "m1",
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Edit(./a.txt)"]},
        "x": {"k": 1},
    }
    fresh = load_settings(ws, environ={})
    assert fresh.permissions.allow == ["Edit(./a.txt)"] and fresh.model == "m1"
    assert [p.name for p in settings_file.parent.iterdir()] == ["settings.json"]  # no temp files left


async def test_always_allow_creates_the_settings_file(ws: Path) -> None:
    path = save_allow_rule(ws, "Bash(npm test)")
    assert save_allow_rule(ws, "Bash(npm test)") == path == ws / ".goat" / "settings.json"
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}


async def test_an_unreadable_settings_file_is_not_overwritten(ws: Path) -> None:
    settings_file = ws / ".goat" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text("[1, 2]")
    notices: list[str] = []
    approver = ScriptedApprover(ApprovalAnswer("always_allow"))
    executor, session = executor_for(ws, RulePolicy(approver, notify=notices.append))
    assert not (await overwrite(executor, ws, "one\n")).is_error
    assert settings_file.read_text() == "[1, 2]" and session.session_rules == ["Edit(./a.txt)"]
    assert len(notices) == 1 and "Could not save the rule Edit(./a.txt)" in notices[0]


async def test_malformed_rules_are_reported_once_and_ignored(ws: Path) -> None:
    notices: list[str] = []
    executor, session = executor_for(ws, RulePolicy(None, notify=notices.append))
    session.settings.permissions.allow = ["Edit(./a.txt", "Edit(./a.txt)"]
    assert not (await overwrite(executor, ws, "new\n")).is_error
    assert not (await overwrite(executor, ws, "newer\n")).is_error
    assert notices == [
        "Ignoring a permission rule in the settings: Not a permission rule: 'Edit(./a.txt' "
        "(expected Tool or Tool(specifier))."
    ]


async def test_the_user_can_edit_the_arguments(ws: Path) -> None:
    edited = {"file_path": str(ws / "a.txt"), "content": "edited by the user\n"}
    approver = ScriptedApprover(ApprovalAnswer("allow_once", updated_input=edited))
    executor, _ = executor_for(ws, RulePolicy(approver))
    assert not (await overwrite(executor, ws, "model text\n")).is_error
    assert (ws / "a.txt").read_text() == "edited by the user\n"


async def test_headless_denies_at_once_and_names_the_setting(ws: Path) -> None:
    executor, _ = executor_for(ws, RulePolicy(None))
    out = await run(executor, "Bash", {"command": f"touch {ws / 'ran'}"})
    assert out.error_code == "PERMISSION_DENIED" and not (ws / "ran").exists()
    assert "Bash(touch:*)" in out.content and str(ws / ".goat" / "settings.json") in out.content
    assert "%%goat --mode acceptEdits" in out.content and "bypassPermissions" in out.content
    written = await overwrite(executor, ws, "x\n")
    assert written.error_code == "PERMISSION_DENIED" and "Edit(./a.txt)" in written.content
    fine = await run(executor, "Write", {"file_path": str(ws / "new.txt"), "content": "created\n"})
    assert not fine.is_error and (ws / "new.txt").read_text() == "created\n"


async def test_tools_the_host_allows_skip_the_prompt_but_not_deny_rules(ws: Path) -> None:
    (ws / ".goat").mkdir()
    (ws / ".goat" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    executor, session = executor_for(ws, RulePolicy(None))  # headless: anything that asks is denied
    session.settings = load_settings(ws, environ={})
    executor.registry.with_allowed("Bash")
    ran = await run(executor, "Bash", {"command": f"touch {ws / 'ran'}"})
    assert not ran.is_error and (ws / "ran").exists()
    removed = await run(executor, "Bash", {"command": f"rm {ws / 'ran'}"})
    assert removed.error_code == "PERMISSION_DENIED" and "Bash(rm:*)" in removed.content
    assert (ws / "ran").exists()
    written = await overwrite(executor, ws, "x\n")  # Write was not marked: still asks, so denied here
    assert written.error_code == "PERMISSION_DENIED" and (ws / "a.txt").read_text() == "original\n"


async def test_read_deny_rules_keep_files_out_of_searches_of_a_parent_folder(ws: Path) -> None:
    (ws / ".goat").mkdir()
    (ws / ".goat" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}}))
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("TOKEN=hunter2\n")
    (ws / "notes.txt").write_text("TOKEN=public\n")
    executor, session = executor_for(ws, RulePolicy(None))
    session.settings = load_settings(ws, environ={})
    found = await run(executor, "Grep", {"pattern": "TOKEN", "path": str(ws), "output_mode": "content"})
    assert "TOKEN=public" in found.content and "hunter2" not in found.content
    assert "1 matching file hidden by the rule Read(./secrets/**)" in found.content
    listed = await run(executor, "Glob", {"pattern": "**/*.txt", "path": str(ws)})
    assert str(ws / "notes.txt") in listed.content and "key.txt" not in listed.content
    assert "hidden by the rule Read(./secrets/**)" in listed.content
    inside = await run(executor, "Grep", {"pattern": "TOKEN", "path": str(ws / "secrets")})
    assert inside.error_code == "PERMISSION_DENIED"
    unrelated = await run(executor, "Grep", {"pattern": "nothing-like-this", "path": str(ws)})
    assert "hidden" not in unrelated.content


async def test_config_cannot_raise_permissions_without_the_user(ws: Path) -> None:
    args = {"setting": "permission_mode", "value": "bypassPermissions"}
    headless, session = executor_for(ws, RulePolicy(None))
    session.settings.permission_mode = "acceptEdits"
    out = await run(headless, "Config", args)
    assert out.error_code == "PERMISSION_DENIED" and "Only the user" in out.content
    assert session.settings.permission_mode == "acceptEdits"
    approver = ScriptedApprover(ApprovalAnswer("deny"), ApprovalAnswer("always_allow"))
    executor, session = executor_for(ws, RulePolicy(approver))
    session.settings.permission_mode = "bypassPermissions"
    assert (await run(executor, "Config", args)).error_code == "PERMISSION_DENIED"
    session.settings.permission_mode = "default"
    assert not (await run(executor, "Config", args)).is_error
    assert session.settings.permission_mode == "bypassPermissions"
    assert all(r.suggested_rule is None for r in approver.requests) and len(approver.requests) == 2
    assert session.session_rules == [] and session.settings.permissions.allow == []
    assert not (await run(executor, "Config", {"setting": "model", "value": "m2"})).is_error
    assert len(approver.requests) == 2


async def test_concurrent_asks_come_one_at_a_time_and_reuse_answers(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("far away\n")
    approver = ScriptedApprover(ApprovalAnswer("allow_session"))
    executor, session = executor_for(ws, RulePolicy(approver))
    calls = [ToolCall(f"r{i}", "Read", {"file_path": str(outside)}) for i in range(3)]
    outputs = await executor.run_calls(calls)
    assert all("far away" in out.content for out in outputs)
    assert len(approver.requests) == 1 and approver.most_in_flight == 1
    assert session.session_rules == [f"Read(//{outside.as_posix().lstrip('/')})"]


async def test_a_failing_approver_denies_without_crashing(ws: Path) -> None:
    executor, _ = executor_for(ws, RulePolicy(BrokenApprover()))
    out = await overwrite(executor, ws, "x\n")
    assert out.error_code == "PERMISSION_DENIED" and "widget comm closed" in out.content


async def test_dont_ask_mode_and_mcp_risk(ws: Path) -> None:
    approver = ScriptedApprover(ApprovalAnswer("allow_once"))
    executor, session = executor_for(ws, RulePolicy(approver))
    out = await run(executor, "mcp__db__drop", {"table": "users"})
    assert out.content == "db.drop done" and approver.requests[0].risk == "critical"
    assert approver.requests[0].suggested_rule == "mcp__db__drop"
    session.settings.permission_mode = "dontAsk"
    denied = await run(executor, "mcp__db__drop", {"table": "users"})
    assert denied.error_code == "PERMISSION_DENIED" and "dontAsk" in denied.content
    assert len(approver.requests) == 1


async def test_plan_mode_denies_edits_and_points_to_exit_plan_mode(ws: Path) -> None:
    executor, session = executor_for(ws, RulePolicy(ScriptedApprover(ApprovalAnswer("allow_once"))))
    session.settings.permission_mode = "plan"
    out = await run(executor, "Write", {"file_path": str(ws / "plan.txt"), "content": "x"})
    assert out.error_code == "PERMISSION_DENIED" and "ExitPlanMode" in out.content
    assert not (ws / "plan.txt").exists()


def test_default_mode_in_settings_starts_the_session_in_that_mode(ws: Path) -> None:
    settings_file = ws / ".goat" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    assert load_settings(ws, environ={}).permission_mode == "default"  # until the folder is trusted
    trust_folder(ws, folder_state(ws).digest)
    assert load_settings(ws, environ={}).permission_mode == "acceptEdits"
    assert load_settings(ws, environ={"GOAT_PERMISSION_MODE": "plan"}).permission_mode == "plan"


def scripted_lines(*lines: str) -> Any:
    queue = list(lines)
    prompts: list[str] = []

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        if not queue:
            raise EOFError
        return queue.pop(0)

    return read_line, prompts


def request_for(rule: str | None) -> ApprovalRequest:
    return ApprovalRequest(
        "Bash", {"command": "npm test"}, "Bash npm test", "command", rule, "Bash runs a shell command."
    )


async def test_stdin_approver_answers() -> None:
    read_line, prompts = scripted_lines("maybe", "S")
    shown: list[str] = []
    answer = await StdinApprover(read_line, shown.append).request(request_for("Bash(npm test)"))
    assert answer == ApprovalAnswer("allow_session")
    assert "[a] always allow (Bash(npm test))" in prompts[0] and any("Please answer" in s for s in shown)
    read_line, _ = scripted_lines("n", "use make test")
    assert await StdinApprover(read_line, shown.append).request(request_for(None)) == ApprovalAnswer(
        "deny", "use make test"
    )
    read_line, prompts = scripted_lines("a", "y")
    assert (await StdinApprover(read_line, shown.append).request(request_for(None))).choice == "allow_once"
    assert "[s]" not in prompts[0]
    read_line, _ = scripted_lines()
    assert await StdinApprover(read_line, shown.append).request(request_for("Bash(x)")) == ApprovalAnswer(
        "deny"
    )


async def test_a_users_deny_is_recorded_once_in_the_cell_and_a_rules_deny_keeps_its_card(ws: Path) -> None:
    from goat_jupyter.tools.events import ToolFinished, ToolStarted
    from goat_jupyter.ui import CellRenderer

    approver = ScriptedApprover(ApprovalAnswer("deny", feedback="not that file"))
    executor, session = executor_for(ws, RulePolicy(approver))
    by_user = await overwrite(executor, ws, "new\n")
    session.settings.permissions.deny.append("Bash(rm:*)")
    by_rule = await run(executor, "Bash", {"command": "rm -f a.txt"})
    assert by_user.error_code == by_rule.error_code == "PERMISSION_DENIED"
    assert "The user denied this Write call" in by_user.content, "the model's words are unchanged"
    shown: list[list[Any]] = []

    class Handle:
        def __init__(self, bundles: list[Any]) -> None:
            self.bundles = bundles

        def update(self, obj: Any, /, *, raw: bool = False, metadata: Any = None) -> None:
            self.bundles.append(obj)

    def display(obj: Any, /, *, raw: bool = False, display_id: bool = False, metadata: Any = None) -> Handle:
        shown.append([obj])
        return Handle(shown[-1])

    for call_id, output in (("u", by_user), ("r", by_rule)):
        renderer = CellRenderer(display)
        renderer.handle(ToolStarted(call_id, "Write", "a.txt", {}))
        renderer.handle(ToolFinished(call_id, "Write", output, 0.1))
        renderer.close()
    user_card, rule_card = shown[0][-1], shown[1][-1]
    assert user_card == {"text/plain": ""}, "the approval's record is the only one"
    assert "Bash(rm:*)" in rule_card["text/plain"], "a rule's denial has no other record: its card says it"
