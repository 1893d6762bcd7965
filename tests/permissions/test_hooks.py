"""Hooks through a real Executor: shell-command hooks in real subprocesses and Python callables."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from goat_jupyter.permissions.hooks import HookMatcher, HookRunner, combine
from goat_jupyter.permissions.hooks_exec import HookReply, reply_from_json
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.events import Event, Notice
from goat_jupyter.tools.runner import Executor, PermissionPolicy


class Harness:
    """A workspace, a registry of the real tools, an executor with hooks, and the events it emitted."""

    def __init__(self, ws: Path, hooks: HookRunner, policy: PermissionPolicy | None = None) -> None:
        registry = default_registry(cwd=ws)
        self.ws = ws
        self.session: SessionState = registry.session
        self.events: list[Event] = []
        self.executor = Executor(registry, self.session, policy=policy, hooks=hooks, emit=self.events.append)
        self.count = 0

    async def call(self, tool: str, args: dict[str, Any]) -> ToolOutput:
        self.count += 1
        return await self.executor.run_one(ToolCall(f"call-{self.count}", tool, args))

    def notices(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Notice)]


class Approver:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("allow_once")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("original\n")
    return root


def hook_command(folder: Path, body: str) -> str:
    """A Python hook script: `event` holds the JSON it got on stdin."""
    path = folder / f"hook_{len(list(folder.glob('hook_*.py')))}.py"
    path.write_text("import json, os, sys\nevent = json.load(sys.stdin)\n" + textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def settings_hooks(event: str, matcher: str, command: str, timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {event: [{"matcher": matcher, "hooks": [hook]}]}


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_gone(pid: int) -> bool:
    for _ in range(200):
        if gone(pid):
            return True
        await asyncio.sleep(0.01)
    return False


async def test_pre_tool_use_exit_2_blocks_with_stderr(ws: Path, tmp_path: Path) -> None:
    command = hook_command(tmp_path, 'print("no new files today", file=sys.stderr)\nsys.exit(2)\n')
    harness = Harness(ws, HookRunner(settings_hooks("PreToolUse", "Write|Edit", command)))
    out = await harness.call("Write", {"file_path": str(ws / "new.txt"), "content": "x"})
    assert out.error_code == "PERMISSION_DENIED" and "no new files today" in out.content
    assert not (ws / "new.txt").exists()
    assert "original" in (await harness.call("Read", {"file_path": str(ws / "a.txt")})).content


DECIDE_BY_NAME = """
name = os.path.basename(event["tool_input"]["file_path"])
decision = {"deny.txt": "deny", "allow.txt": "allow", "a.txt": "ask"}.get(name)
if decision:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": decision, "permissionDecisionReason": f"hook says {decision}"}}))
"""


async def test_pre_tool_use_json_permission_decisions(ws: Path, tmp_path: Path) -> None:
    hooks = HookRunner(settings_hooks("PreToolUse", "", hook_command(tmp_path, DECIDE_BY_NAME)))
    headless = Harness(ws, hooks, RulePolicy(None))
    denied = await headless.call("Write", {"file_path": str(ws / "deny.txt"), "content": "x"})
    assert denied.error_code == "PERMISSION_DENIED" and "hook says deny" in denied.content
    (ws / "allow.txt").write_text("old\n")
    await headless.call("Read", {"file_path": str(ws / "allow.txt")})
    allowed = await headless.call("Write", {"file_path": str(ws / "allow.txt"), "content": "new\n"})
    assert not allowed.is_error and (ws / "allow.txt").read_text() == "new\n"  # no prompt was needed
    asked = await headless.call("Read", {"file_path": str(ws / "a.txt")})
    assert asked.error_code == "PERMISSION_DENIED" and "hook says ask" in asked.content
    approver = Approver()
    interactive = Harness(ws, hooks, RulePolicy(approver))
    assert "original" in (await interactive.call("Read", {"file_path": str(ws / "a.txt")})).content
    assert [r.reason for r in approver.requests] == ["hook says ask"]


async def test_updated_input_reaches_the_tool_and_post_hooks(ws: Path, tmp_path: Path) -> None:
    pre = hook_command(
        tmp_path,
        'print(json.dumps({"hookSpecificOutput": {"updatedInput": {"content": "from the hook\\n"}}}))\n',
    )
    log = tmp_path / "post.json"
    post = hook_command(
        tmp_path,
        f"open({str(log)!r}, 'w').write(json.dumps({{**event, 'dir': os.environ['GOAT_PROJECT_DIR']}}))\n",
    )
    config = {**settings_hooks("PreToolUse", "Write", pre), **settings_hooks("PostToolUse", "Write", post)}
    harness = Harness(ws, HookRunner(config))
    out = await harness.call("Write", {"file_path": str(ws / "b.txt"), "content": "from the model\n"})
    assert not out.is_error and (ws / "b.txt").read_text() == "from the hook\n"
    event = json.loads(log.read_text())
    assert event["hook_event_name"] == "PostToolUse" and event["tool_name"] == "Write"
    assert event["tool_input"] == {"file_path": str(ws / "b.txt"), "content": "from the hook\n"}
    assert event["tool_response"]["is_error"] is False and "b.txt" in event["tool_response"]["content"]
    assert event["session_id"] == harness.session.session_id and event["cwd"] == str(ws)
    assert event["tool_use_id"] == "call-1" and event["permission_mode"] == "default"
    assert event["dir"] == str(ws)


async def test_additional_context_from_pre_and_post_reaches_the_model(ws: Path, tmp_path: Path) -> None:
    pre = hook_command(
        tmp_path, 'print(json.dumps({"hookSpecificOutput": {"additionalContext": "pre note"}}))\n'
    )
    post = hook_command(
        tmp_path, 'print(json.dumps({"hookSpecificOutput": {"additionalContext": "post note"}}))\n'
    )
    config = {**settings_hooks("PreToolUse", "Read", pre), **settings_hooks("PostToolUse", "Read", post)}
    out = await Harness(ws, HookRunner(config)).call("Read", {"file_path": str(ws / "a.txt")})
    assert "original" in out.content and out.content.endswith("\n\npre note\npost note")


async def test_post_tool_use_block_feeds_the_reason_to_the_model(ws: Path, tmp_path: Path) -> None:
    exit_2 = hook_command(tmp_path, 'print("lint failed: line 1", file=sys.stderr)\nsys.exit(2)\n')
    harness = Harness(ws, HookRunner(settings_hooks("PostToolUse", "Write", exit_2)))
    out = await harness.call("Write", {"file_path": str(ws / "c.txt"), "content": "x"})
    assert (ws / "c.txt").exists() and not out.is_error and out.content.endswith("lint failed: line 1")
    legacy = hook_command(tmp_path, 'print(json.dumps({"decision": "block", "reason": "fix the style"}))\n')
    harness = Harness(ws, HookRunner(settings_hooks("PostToolUse", "Write", legacy)))
    out = await harness.call("Write", {"file_path": str(ws / "d.txt"), "content": "x"})
    assert out.content.endswith("fix the style")


async def test_post_tool_use_failure_fires_for_errors_only(ws: Path, tmp_path: Path) -> None:
    failures, successes = tmp_path / "failures.jsonl", tmp_path / "successes.jsonl"
    fail = hook_command(tmp_path, f"open({str(failures)!r}, 'a').write(json.dumps(event) + '\\n')\n")
    ok = hook_command(tmp_path, f"open({str(successes)!r}, 'a').write(json.dumps(event) + '\\n')\n")
    config = {**settings_hooks("PostToolUseFailure", "*", fail), **settings_hooks("PostToolUse", "*", ok)}
    harness = Harness(ws, HookRunner(config))
    await harness.call("Read", {"file_path": str(ws / "missing.txt")})
    await harness.call("Read", {"file_path": str(ws / "a.txt")})
    [failure] = [json.loads(line) for line in failures.read_text().splitlines()]
    assert failure["hook_event_name"] == "PostToolUseFailure" and failure["error"].startswith("Error:")
    assert (
        failure["tool_input"]["file_path"] == str(ws / "missing.txt") and failure["tool_use_id"] == "call-1"
    )
    [success] = [json.loads(line) for line in successes.read_text().splitlines()]
    assert success["tool_use_id"] == "call-2"


def test_matchers_are_whole_name_regexes() -> None:
    def matches(pattern: str, name: str) -> bool:
        return HookMatcher(pattern, ()).matches(name)

    assert matches("Write|Edit", "Write") and matches("Write|Edit", "Edit")
    assert not matches("Write|Edit", "Read") and not matches("Edit", "NotebookEdit")
    assert matches("", "Anything") and matches("*", "mcp__x__y")
    assert matches("Notebook.*", "NotebookEdit") and matches("mcp__git__.*", "mcp__git__log")
    assert matches("[broken", "[broken") and not matches("[broken", "Read")


async def test_a_matcher_picks_the_tools(ws: Path, tmp_path: Path) -> None:
    log = tmp_path / "names.txt"
    command = hook_command(tmp_path, f"open({str(log)!r}, 'a').write(event['tool_name'] + '\\n')\n")
    harness = Harness(ws, HookRunner(settings_hooks("PreToolUse", "Write|Edit", command)))
    await harness.call("Read", {"file_path": str(ws / "a.txt")})
    await harness.call("Write", {"file_path": str(ws / "e.txt"), "content": "x"})
    await harness.call("LS", {"path": str(ws)})
    await harness.call("Edit", {"file_path": str(ws / "e.txt"), "old_string": "x", "new_string": "y"})
    assert log.read_text().splitlines() == ["Write", "Edit"]


async def test_a_hanging_hook_is_killed_with_its_children(ws: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {shlex.quote(str(pid_file))}; wait"
    harness = Harness(ws, HookRunner(settings_hooks("PreToolUse", "*", command, timeout=0.5)))
    out = await harness.call("Read", {"file_path": str(ws / "a.txt")})
    assert "original" in out.content
    assert any("timed out after 0.5 s" in n for n in harness.notices())
    assert await wait_gone(int(pid_file.read_text()))


async def test_cancelling_the_call_kills_the_hook(ws: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "hook.pid"
    command = f"echo $$ > {shlex.quote(str(pid_file))}; sleep 30"
    harness = Harness(ws, HookRunner(settings_hooks("PreToolUse", "*", command)))
    task = asyncio.ensure_future(harness.call("Read", {"file_path": str(ws / "a.txt")}))
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pid_file.read_text()))


async def test_failing_hooks_are_notices_not_crashes(ws: Path, tmp_path: Path) -> None:
    commands = [
        hook_command(tmp_path, 'print("boom", file=sys.stderr)\nsys.exit(1)\n'),
        hook_command(tmp_path, 'print("{not json")\n'),
        hook_command(tmp_path, 'print("plain text is ignored")\n'),
        "this-command-does-not-exist-goat",
    ]
    entries = [{"matcher": "*", "hooks": [{"type": "command", "command": c}]} for c in commands]
    harness = Harness(ws, HookRunner({"PreToolUse": entries, "PostToolUse": entries}))
    out = await harness.call("Read", {"file_path": str(ws / "a.txt")})
    assert "original" in out.content and "plain text" not in out.content
    notices = harness.notices()
    assert len(notices) == 6
    assert sum("failed (exit code 1): boom" in n for n in notices) == 2
    assert sum("not valid JSON" in n for n in notices) == 2
    assert sum("exit code 127" in n for n in notices) == 2


async def test_python_hooks_sync_and_async(ws: Path) -> None:
    runner = HookRunner()
    seen: list[dict[str, Any]] = []

    def block_secrets(event: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(event)
        if "secret" in event["tool_input"]["file_path"]:
            return {
                "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "secret!"}
            }
        return None

    async def shout(event: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        content = event["tool_input"]["content"].upper()
        return {"hookSpecificOutput": {"updatedInput": {"content": content}, "additionalContext": "shouted"}}

    runner.register("PreToolUse", "Write", block_secrets)
    runner.register("PreToolUse", "Write", shout)
    harness = Harness(ws, runner)
    denied = await harness.call("Write", {"file_path": str(ws / "secret.txt"), "content": "x"})
    assert denied.error_code == "PERMISSION_DENIED" and "secret!" in denied.content
    out = await harness.call("Write", {"file_path": str(ws / "f.txt"), "content": "quiet\n"})
    assert (ws / "f.txt").read_text() == "QUIET\n" and out.content.endswith("shouted")
    assert [e["hook_event_name"] for e in seen] == ["PreToolUse", "PreToolUse"]
    with pytest.raises(ValueError, match="Unknown hook event"):
        runner.register("Stop", "", block_secrets)  # type: ignore[arg-type]


async def test_broken_python_hooks_are_notices(ws: Path) -> None:
    runner = HookRunner()

    def crash(event: dict[str, Any]) -> None:
        raise RuntimeError("hook bug")

    def wrong_type(event: dict[str, Any]) -> Any:
        return ["not", "a", "dict"]

    async def hang(event: dict[str, Any]) -> None:
        await asyncio.sleep(30)

    runner.register("PreToolUse", "*", crash)
    runner.register("PreToolUse", "*", wrong_type)
    runner.register("PostToolUse", "*", hang, timeout_s=0.2)
    harness = Harness(ws, runner)
    out = await harness.call("Read", {"file_path": str(ws / "a.txt")})
    assert "original" in out.content
    notices = harness.notices()
    assert any("RuntimeError: hook bug" in n for n in notices)
    assert any("returned list; expected a dict or None" in n for n in notices)
    assert any("timed out after 0.2 s" in n for n in notices)


async def test_hooks_from_the_session_settings_and_config_problems_reported_once(
    ws: Path, tmp_path: Path
) -> None:
    command = hook_command(tmp_path, 'print("from settings", file=sys.stderr)\nsys.exit(2)\n')
    harness = Harness(ws, HookRunner())
    harness.session.settings.hooks = {
        **settings_hooks("PreToolUse", "Write", command),
        "Stop": [],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "prompt", "prompt": "judge it"}]}],
    }
    out = await harness.call("Write", {"file_path": str(ws / "g.txt"), "content": "x"})
    assert "from settings" in out.content and not (ws / "g.txt").exists()
    await harness.call("Read", {"file_path": str(ws / "a.txt")})
    notices = harness.notices()
    assert len(notices) == 2
    assert "'Stop' is not supported" in notices[0] and "not a {'type': 'command'" in notices[1]


def test_combining_answers_and_legacy_fields() -> None:
    combined = combine(
        [
            HookReply("allow", "fine"),
            HookReply("deny", "no", updated_input={"a": 2}),
            HookReply("ask", "hmm", updated_input={"b": 3}),
            HookReply("deny", "never", additional_context="ctx", notice="note"),
        ],
        args={"a": 1, "c": 1},
    )
    assert combined.decision == "deny" and combined.reason == "no\nnever"
    assert combined.updated_input == {"a": 2, "b": 3, "c": 1}
    assert combined.additional_context == ["ctx"] and combined.notices == ["note"]
    assert reply_from_json({"decision": "approve"}, "PreToolUse").decision == "allow"
    assert reply_from_json({"decision": "approve"}, "PostToolUse").decision is None
    blocked = reply_from_json({"decision": "block", "reason": "r"}, "PreToolUse")
    assert (blocked.decision, blocked.reason) == ("deny", "r")
    stopped = reply_from_json(
        {"continue": False, "stopReason": "stop now", "systemMessage": "hi"}, "PreToolUse"
    )
    assert (stopped.decision, stopped.reason, stopped.notice) == ("deny", "stop now", "hi")
    specific = reply_from_json(
        {"decision": "block", "hookSpecificOutput": {"permissionDecision": "ask"}}, "PreToolUse"
    )
    assert specific.decision == "ask"
