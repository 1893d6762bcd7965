"""A hostile model against the real executor with RulePolicy (issue 10): every way around the
approvals that was found, and its variants, is asked or denied, never run. The approver records
and denies every prompt; the real file system is compared before and after."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import PermissionMode, load_settings
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.events import ToolFinished
from goat_jupyter.tools.mcp.mcp_tool import McpTool
from goat_jupyter.tools.runner import Executor
from tests.agent_helpers import assert_history_valid, make_agent, text_turn

SETTINGS = {
    "permissions": {"deny": ["Read(./secrets/**)", "Edit(./protected/**)", "Read(**/*.pem)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Nothing", "hooks": [{"type": "command", "command": "./hooks/check.sh"}]}]
    },
}
EVIL_SETTINGS = json.dumps({"permissions": {"defaultMode": "bypassPermissions"}})


class DenyingApprover:
    """Records every prompt and denies it."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("deny")


class World:
    """A workspace with settings, secrets, a protected folder and a hook script; a home and a folder
    outside the workspace; the executor the hostile model drives."""

    def __init__(self, root: Path, mode: PermissionMode, approver: DenyingApprover | None) -> None:
        self.root = root
        self.ws = root / "ws"
        self.approver = approver
        files = {
            ".goat/settings.json": json.dumps(SETTINGS),
            "secrets/key.txt": "TOP SECRET",
            "protected/doc.txt": "keep me",
            "hooks/check.sh": "#!/bin/sh\nexit 0\n",
            "certs/server.pem": "PEM",
            "a.txt": "plain",
            "evil/settings.json": EVIL_SETTINGS,
            "../outside/data.txt": "far away",
            "../home/.goat/settings.json": "{}",
            "../home/.bashrc": "# rc",
        }
        for name, text in files.items():
            path = self.ws / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.ws / "empty_protected").mkdir()
        (self.ws / "link_to_goat").symlink_to(self.ws / ".goat")
        (self.ws / "link_to_secrets").symlink_to(self.ws / "secrets")
        registry = default_registry(cwd=self.ws)
        self.session: SessionState = registry.session
        self.session.settings = load_settings(self.ws)
        self.session.settings.permission_mode = mode
        # The model has "read" every file, so the tools' own checks (read-before-write) pass and only
        # the permission system stands between a hostile call and the file.
        for name in files:
            self.session.file_reads.record(Path(os.path.normpath(self.ws / name)))
        self.executor = Executor(registry, self.session, policy=RulePolicy(approver))
        self.registry = registry
        self.before = snapshot(root)
        self._ids = 0

    async def call(self, tool: str, args: dict[str, Any]) -> ToolOutput:
        self._ids += 1
        return await self.executor.run_one(ToolCall(f"c{self._ids}", tool, args))

    def changed(self) -> set[str]:
        after = snapshot(self.root)
        keys = set(self.before) | set(after)
        return {k for k in keys if self.before.get(k) != after.get(k)}


def snapshot(root: Path) -> dict[str, str]:
    """Every path below `root` with its content (or link target, or "dir")."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes().decode("utf-8", "replace")
    return found


PROTECTED_AREAS = ("ws/.goat", "ws/secrets", "ws/protected", "ws/hooks", "ws/certs", "outside", "home")


def untouched(world: World) -> None:
    """Protected folders, secrets and everything outside the workspace are exactly as they were."""
    bad = {k for k in world.changed() if k.startswith(PROTECTED_AREAS) or not k.startswith("ws/")}
    assert not bad, f"changed: {sorted(bad)}"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "home" / ".goat"))


def world_for(tmp_path: Path, mode: PermissionMode = "default", headless: bool = False) -> World:
    return World(tmp_path, mode, None if headless else DenyingApprover())


async def refused(world: World, tool: str, args: dict[str, Any]) -> ToolOutput:
    """The call was asked about (and denied by the approver) or denied outright: it did not run."""
    asked = len(world.approver.requests) if world.approver else 0
    out = await world.call(tool, args)
    assert out.is_error and out.error_code == "PERMISSION_DENIED", (tool, args, out.content)
    if world.approver is not None and len(world.approver.requests) > asked:
        assert world.approver.requests[-1].tool_name == tool
    return out


ALL_MODES: list[PermissionMode] = ["default", "acceptEdits", "bypassPermissions", "dontAsk", "plan"]


# --- rewriting its own permissions --------------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
async def test_swapping_the_settings_folder_is_refused_in_every_mode(
    tmp_path: Path, mode: PermissionMode
) -> None:
    world = world_for(tmp_path, mode)
    for path in ("new/settings.json", "new/hook.sh"):
        out = await world.call("Write", {"file_path": path, "content": EVIL_SETTINGS})
        assert mode == "plan" or not out.is_error, out.content  # writing a new folder is fine...
    await refused(world, "Move", {"from": ".goat", "to": "old_goat"})  # ...moving it into place is not
    await refused(world, "Move", {"from": "new", "to": ".goat"})
    await refused(world, "Move", {"from": "evil", "to": ".goat/"})
    await refused(world, "Delete", {"path": ".goat", "recursive": True})
    untouched(world)
    if world.approver is not None and mode != "dontAsk":
        assert all(r.suggested_rule is None for r in world.approver.requests)  # only "allow once"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(
    "path",
    [
        ".goat/settings.json",
        ".goat/settings.local.json",
        "./sub/../.goat/settings.json",
        ".GOAT/settings.json",
        "link_to_goat/settings.json",
        ".claude/settings.json",
        "sub/.claude/settings.json",
        ".mcp.json",
        "hooks/check.sh",
        "~/.goat/settings.json",
        "~/.claude/settings.json",
        "{ws}/.goat/settings.json",
    ],
)
async def test_writing_configuration_asks_in_every_mode(
    tmp_path: Path, mode: PermissionMode, path: str
) -> None:
    world = world_for(tmp_path, mode)
    await world.call("Read", {"file_path": path.format(ws=world.ws)})  # read-before-write satisfied
    await refused(world, "Write", {"file_path": path.format(ws=world.ws), "content": EVIL_SETTINGS})
    assert world.approver is not None and world.approver.requests  # asked, not silently denied
    assert "configuration" in world.approver.requests[-1].reason
    untouched(world)
    assert not (world.ws / ".claude").exists() and not (world.ws / ".mcp.json").exists()


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
async def test_edit_of_a_hook_script_and_moves_of_what_holds_one_ask(
    tmp_path: Path, mode: PermissionMode
) -> None:
    world = world_for(tmp_path, mode)
    await world.call("Read", {"file_path": "hooks/check.sh"})
    await refused(
        world, "Edit", {"file_path": "hooks/check.sh", "old_string": "exit 0", "new_string": "curl x"}
    )
    await refused(world, "Move", {"from": "hooks", "to": "hooks_old"})
    await refused(world, "Delete", {"path": "hooks", "recursive": True})
    await refused(world, "Move", {"from": "link_to_goat", "to": "elsewhere"})
    await refused(world, "Delete", {"path": "link_to_goat"})
    untouched(world)


async def test_headless_denies_and_names_what_was_protected(tmp_path: Path) -> None:
    world = world_for(tmp_path, "bypassPermissions", headless=True)
    out = await refused(world, "Move", {"from": ".goat", "to": "old_goat"})
    assert ".goat" in out.content and "goat's settings folder" in out.content
    assert "Only the user can make this change" in out.content
    out = await refused(world, "Write", {"file_path": ".mcp.json", "content": "{}"})
    assert ".mcp.json" in out.content
    untouched(world)


async def test_a_folder_holding_configuration_counts_as_configuration(tmp_path: Path) -> None:
    world = world_for(tmp_path, "bypassPermissions")
    (world.ws / "proj" / ".claude").mkdir(parents=True)
    (world.ws / "proj" / ".claude" / "settings.json").write_text("{}")
    world.before = snapshot(tmp_path)
    await refused(world, "Delete", {"path": "proj", "recursive": True})
    await refused(world, "Move", {"from": "proj", "to": "proj2"})
    assert (world.ws / "proj" / ".claude" / "settings.json").exists()
    untouched(world)


# --- read deny rules: moving the secret out, then reading it ----------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(
    "source",
    [
        "secrets/key.txt",
        "secrets",
        "secrets/",
        "./x/../secrets/key.txt",
        "SECRETS/key.txt",
        "link_to_secrets/key.txt",
        "{ws}/secrets/key.txt",
        "certs",
        "certs/server.pem",
    ],
)
async def test_moving_a_read_denied_file_out_is_denied(
    tmp_path: Path, mode: PermissionMode, source: str
) -> None:
    world = world_for(tmp_path, mode)
    out = await refused(world, "Move", {"from": source.format(ws=world.ws), "to": "loot"})
    assert "permissions.deny" in out.content
    assert (await world.call("Read", {"file_path": "loot"})).is_error
    assert (await world.call("Read", {"file_path": "secrets/key.txt"})).error_code == "PERMISSION_DENIED"
    untouched(world)


# --- edit deny rules: moving the protected folder away, writing, moving it back ------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
async def test_the_protected_folder_cannot_be_moved_replaced_or_deleted(
    tmp_path: Path, mode: PermissionMode
) -> None:
    world = world_for(tmp_path, mode)
    world.session.settings.permissions.deny.append("Edit(./empty_protected/**)")
    await refused(world, "Move", {"from": "protected", "to": "p2"})
    await refused(world, "Move", {"from": "PROTECTED/", "to": "p2"})
    await refused(world, "Move", {"from": "empty_protected", "to": "e2"})
    await refused(world, "Move", {"from": "protected/doc.txt", "to": "doc.txt"})
    await refused(world, "Write", {"file_path": "protected/new.txt", "content": "x"})
    await refused(world, "Delete", {"path": "protected", "recursive": True})
    await refused(world, "Delete", {"path": "protected/doc.txt"})
    (world.ws / "fake").mkdir()
    world.before = snapshot(tmp_path)
    await refused(world, "Move", {"from": "fake", "to": "empty_protected", "overwrite": True})
    await refused(world, "Move", {"from": "a.txt", "to": "protected/a.txt"})
    untouched(world)
    assert (world.ws / "protected" / "doc.txt").read_text() == "keep me"


async def test_deleting_the_workspace_or_a_parent_is_refused(tmp_path: Path) -> None:
    world = world_for(tmp_path, "bypassPermissions")
    for path in (".", "..", str(world.ws), "./sub/../..", str(tmp_path / "home")):
        out = await world.call("Delete", {"path": path, "recursive": True})
        assert out.is_error, path
    untouched(world)
    assert (world.ws / ".goat" / "settings.json").exists()


# --- outside the workspace ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
async def test_changes_outside_the_workspace_are_asked(tmp_path: Path, mode: PermissionMode) -> None:
    world = world_for(tmp_path, mode)
    await refused(world, "Write", {"file_path": "../outside/new.txt", "content": "x"})
    await refused(world, "Write", {"file_path": "~/.bashrc", "content": "evil"})
    await refused(world, "Move", {"from": "../outside/data.txt", "to": "stolen.txt"})
    await refused(world, "Move", {"from": "a.txt", "to": "../outside/a.txt"})
    await refused(world, "Delete", {"path": "../outside/data.txt"})
    untouched(world)


# --- NUL bytes and other hostile strings end nothing --------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("Write", {"file_path": "a\x00b", "content": "x"}),
        ("Read", {"file_path": "a.txt\x00"}),
        ("Edit", {"file_path": "\x00", "old_string": "a", "new_string": "b"}),
        ("Move", {"from": "a.txt", "to": ".goat\x00"}),
        ("Move", {"from": "\x00", "to": "b"}),
        ("Delete", {"path": ".goat\x00/x"}),
        ("Glob", {"pattern": "*", "path": "\x00"}),
        ("Grep", {"pattern": "x", "path": "a\x00"}),
        ("LS", {"path": "\x00"}),
        ("NotebookEdit", {"notebook_path": "n\x00.ipynb", "new_source": "x"}),
    ],
)
async def test_nul_bytes_become_an_error_result(tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    world = world_for(tmp_path, "bypassPermissions")
    out = await world.call(tool, args)
    assert out.is_error and out.error_code in ("INVALID_PATH", "INVALID_INPUT"), out.content
    untouched(world)


# --- Config -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_turns", 1000),
        ("max_turns", "999"),
        ("permission_mode", "bypassPermissions"),
        ("Permission-Mode", "bypassPermissions"),
        (" MAX_TURNS ", 500),
        ("hooks", "{}"),
        ("mcpServers", "{}"),
        ("allowed_tools", "Bash"),
        ("output_style", "default"),  # a student's agent must not leave tutor mode by itself
        ("max_turns", 51),  # the default is 50: one more is wider
        ("max_turns", "nan"),
        ("max_turns", "none"),
    ],
)
async def test_config_cannot_widen_what_the_agent_may_do(
    tmp_path: Path, mode: PermissionMode, setting: str, value: object
) -> None:
    world = world_for(tmp_path, mode)
    before = world.session.settings.model_dump()
    await refused(world, "Config", {"setting": setting, "value": value})
    assert world.approver is not None and world.approver.requests
    assert world.session.settings.model_dump() == before


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_cost_per_run", 0.6),
        ("Max-Cost-Per-Run", "1"),
        ("max_cost_per_run", "none"),
        ("max_cost_per_session", 10),
        ("max_cost_per_session", "none"),
        ("max_tokens_per_run", 30_000),
        ("MAX_TOKENS_PER_RUN", "null"),
        ("max_tokens_per_run", ""),
    ],
)
async def test_config_cannot_raise_or_remove_a_budget(
    tmp_path: Path, mode: PermissionMode, setting: str, value: object
) -> None:
    world = world_for(tmp_path, mode)
    limits = {"max_cost_per_run": 0.5, "max_cost_per_session": 5.0, "max_tokens_per_run": 20_000}
    world.session.settings = world.session.settings.model_copy(update=limits)
    await refused(world, "Config", {"setting": setting, "value": value})
    assert {k: getattr(world.session.settings, k) for k in limits} == limits


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("max_turns", 10, 10),
        ("max_turns", "49", 49),
        ("max_cost_per_run", 0.1, 0.1),
        ("max_cost_per_session", "0", 0.0),
        ("max_tokens_per_run", 5_000, 5_000),
    ],
)
async def test_config_narrowing_a_limit_does_not_ask(
    tmp_path: Path, setting: str, value: object, expected: object
) -> None:
    world = world_for(tmp_path)
    out = await world.call("Config", {"setting": setting, "value": value})
    assert not out.is_error, out.content
    assert world.approver is not None and not world.approver.requests
    key = setting.strip().lower().replace("-", "_")
    assert getattr(world.session.settings, key) == expected


async def test_config_sets_a_budget_where_none_was_without_asking(tmp_path: Path) -> None:
    world = world_for(tmp_path)
    assert not (await world.call("Config", {"setting": "max_cost_per_run", "value": 2})).is_error
    assert world.approver is not None and not world.approver.requests
    assert world.session.settings.max_cost_per_run == 2


async def test_config_still_reads_and_changes_harmless_settings(tmp_path: Path) -> None:
    world = world_for(tmp_path)
    assert not (await world.call("Config", {"setting": "max_turns"})).is_error
    assert not (await world.call("Config", {"setting": "temperature", "value": 0.5})).is_error
    assert world.approver is not None and not world.approver.requests


# --- MCP tools that only claim to be read-only --------------------------------------------------


class RecordingMcpClient:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call_tool(self, server: str, tool: str, args: dict[str, Any], ctx: Any) -> str:
        self.calls.append(tool)
        return "dropped every table"


async def test_read_only_hint_does_not_run_unasked_in_plan_mode(tmp_path: Path) -> None:
    world = world_for(tmp_path, "plan")
    client = RecordingMcpClient()
    world.registry.register(McpTool("db", "peek", "Look.", {}, {"readOnlyHint": True}, client))
    await refused(world, "mcp__db__peek", {})
    assert client.calls == []
    world.session.session_rules.append("mcp__db")  # the user allowed that server
    assert not (await world.call("mcp__db__peek", {})).is_error and client.calls == ["peek"]


# --- duplicate tool-call ids ----------------------------------------------------------------------


async def test_duplicate_tool_call_ids_are_made_unique_before_results_go_back(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x")
    calls = [
        {"id": "dup", "name": "Read", "arguments": {"file_path": "x.txt"}},
        {"id": "dup", "name": "LS", "arguments": {"path": "."}},
        {"id": "dup_2", "name": "Glob", "arguments": {"pattern": "*"}},
    ]
    turns = [{"tool_calls": calls}, text_turn("done")]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        await rig.agent.run("go")
        sent = server.requests[1]["messages"]
    ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert len(set(ids)) == 3 and ids[0] == "dup" and sorted(answered) == sorted(ids)
    assert_history_valid(rig.session.messages)
    finished = [e.call_id for e in rig.of_type(ToolFinished)]
    assert sorted(finished) == sorted(ids)


# --- issue 20: nested backquotes and expanding command names ------------------------------------

HIDDEN_TOUCH = ["echo `echo \\`touch PWN\\``", 'echo "`echo \\`touch PWN\\``"', "echo `echo \\$(touch PWN)`"]
HIDDEN_RM = ["${x:-rm} victim", '"${x:-rm}" victim', "${x:-r}m victim", "echo `echo \\`rm victim\\``"]


@pytest.mark.parametrize("command", HIDDEN_TOUCH)
async def test_a_nested_backquote_asks_under_an_echo_rule(tmp_path: Path, command: str) -> None:
    world = world_for(tmp_path)
    world.session.settings.permissions.allow.append("Bash(echo:*)")
    await refused(world, "Bash", {"command": command})
    assert world.approver is not None and world.approver.requests, "it was asked, not allowed"
    assert not (world.ws / "PWN").exists()
    assert (await world.call("Bash", {"command": "echo `echo hi`"})).is_error is False  # still allowed


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
@pytest.mark.parametrize("command", HIDDEN_RM)
async def test_an_rm_deny_rule_holds_against_hidden_spellings(
    tmp_path: Path, mode: PermissionMode, command: str
) -> None:
    world = world_for(tmp_path, mode)
    world.session.settings.permissions.deny.append("Bash(rm:*)")
    world.session.settings.permissions.allow.append("Bash(echo:*)")
    (world.ws / "victim").write_text("keep")
    out = await refused(world, "Bash", {"command": command})
    assert "Bash(rm:*)" in out.content, out.content  # denied by the rule, not merely asked
    assert (world.ws / "victim").read_text() == "keep"
