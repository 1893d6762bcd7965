"""protected_reason(): configuration is recognised under every spelling, and ordinary paths are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.permissions.protected import hook_commands_of, hook_scripts, protected_reason

WS = Path("/work/ws")
HOME = Path("/home/user")


@pytest.fixture(autouse=True)
def goat_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOAT_HOME", "/opt/goat-home")


def reason(path: str, **options: object) -> str | None:
    return protected_reason(Path(path), WS, home=HOME, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "path",
    [
        "/work/ws/.goat",
        "/work/ws/.goat/settings.json",
        "/work/ws/.goat/settings.local.json",
        "/work/ws/.GoAt/settings.json",
        "/work/ws/.goat/",
        "/work/ws/sub/../.goat/x",
        "/work/ws/.claude/settings.json",
        "/work/ws/deep/er/.claude",
        "/work/ws/.mcp.json",
        "/work/ws/.goat./settings.json",
        "/work/ws/.claude /x",
        "/work/ws/.git/hooks/pre-commit",
        "/work/ws/.git/config",
        "/work/ws/.git",
        "/work/ws/sub/.MCP.json",
        "/home/user/.goat/settings.json",
        "/home/user/.claude",
        "/opt/goat-home/settings.json",
        "/opt/goat-home",
        "/opt",  # holds $GOAT_HOME
        "/work",  # holds the workspace's .goat
        "/work/ws",
        "/",
    ],
)
def test_configuration_and_what_holds_it_is_protected(path: str) -> None:
    assert reason(path) is not None


@pytest.mark.parametrize(
    "path",
    [
        "/work/ws/a.txt",
        "/work/ws/goat/settings.json",
        "/work/ws/src/.goatee",
        "/work/other/x",
        "/home/user/x",
    ],
)
def test_ordinary_paths_are_not(path: str) -> None:
    assert reason(path) is None


def test_reasons_name_what_is_protected() -> None:
    assert reason("/work/ws/.goat/settings.json") == (
        "/work/ws/.goat/settings.json is inside .goat, goat's settings folder"
    )
    assert "contains /opt/goat-home" in (reason("/opt") or "")
    assert "hook" in (reason("/work/ws/hooks/check.sh", hook_commands=["./hooks/check.sh"]) or "")


def test_files_configured_hooks_run_are_protected() -> None:
    hooks = {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "python3 $GOAT_PROJECT_DIR/h/pre.py --x"}],
            },
            {"matcher": "", "hooks": [{"command": "'${CLAUDE_PROJECT_DIR}/h/two words.sh'"}, "junk"]},
        ],
        "PostToolUse": "not a list",
    }
    commands = hook_commands_of(hooks)
    assert len(commands) == 2
    scripts = hook_scripts(commands, WS)
    assert WS / "h" / "pre.py" in scripts and WS / "h" / "two words.sh" in scripts
    assert reason("/work/ws/h", hook_commands=commands) is not None  # the folder holding them
    assert reason("/work/ws/h/other.py", hook_commands=commands) is None
    assert hook_scripts(["bash -c 'unclosed"], WS) == []  # unparsable: split on spaces, nothing path-like
    # folders named in a hook command do not make the whole workspace protected
    assert hook_scripts(["cd . && cd .. && ls / ~ $GOAT_PROJECT_DIR ../.."], WS) == []
    assert reason("/work/ws/a.txt", hook_commands=["cd . && ./run.sh"]) is None


def test_symlinks_resolve_to_what_they_point_at(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".goat").mkdir(parents=True)
    (ws / "innocent").symlink_to(ws / ".goat")
    (ws / "dangling").symlink_to(ws / ".claude")
    assert protected_reason(ws / "innocent" / "settings.json", ws, home=tmp_path) is not None
    assert protected_reason(ws / "dangling", ws, home=tmp_path) is not None


spellings = st.tuples(
    st.sampled_from([".goat", ".GOAT", ".Goat", ".claude", ".CLAUDE"]),
    st.sampled_from(["", "/", "/settings.json", "/settings.local.json", "/hooks/x.sh"]),
    st.sampled_from(["", "./", "sub/../", "a/b/../../", "./sub/./../"]),
)


@settings(max_examples=100, derandomize=True)
@given(spelling=spellings)
def test_every_spelling_of_a_settings_path_asks_in_bypass_mode(spelling: tuple[str, str, str]) -> None:
    name, tail, prefix = spelling
    raw = prefix + name + tail
    context = PermissionContext(WS, home=HOME, mode="bypassPermissions")
    for args in ({"file_path": raw, "content": "{}"}, {"file_path": str(WS / raw), "content": "{}"}):
        assert evaluate("Write", args, "mutating", context).behavior == "ask", raw
    assert evaluate("Delete", {"path": raw}, "mutating", context).behavior == "ask"
    assert evaluate("Move", {"from": "new", "to": raw}, "mutating", context).behavior == "ask"
    assert evaluate("Move", {"from": raw, "to": "old"}, "mutating", context).behavior == "ask"
    dont_ask = PermissionContext(WS, home=HOME, mode="dontAsk", allow=["Edit", "Write", "Delete", "Move"])
    assert evaluate("Write", {"file_path": raw, "content": "{}"}, "mutating", dont_ask).behavior == "deny"


plain_names = st.text(alphabet="abcxyz_-0123456789.", min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and n.casefold() not in (".goat", ".claude", ".mcp.json")
)


@settings(max_examples=100, derandomize=True)
@given(parts=st.lists(plain_names, min_size=1, max_size=4))
def test_ordinary_workspace_files_stay_unprotected(parts: list[str]) -> None:
    path = WS.joinpath(*parts)
    assert protected_reason(path, WS, home=HOME) is None, os.fspath(path)


def test_a_workspace_inside_a_settings_folder_does_not_protect_every_file() -> None:
    ws = Path("/home/user/.claude/projects/demo")
    assert protected_reason(ws / "notes.txt", ws, home=Path("/elsewhere")) is None
    assert protected_reason(ws / ".goat" / "settings.json", ws, home=Path("/elsewhere")) is not None
    assert protected_reason(ws.parent / "settings.json", ws, home=Path("/elsewhere")) is not None


def test_relative_and_home_paths_are_resolved_like_the_tools_do() -> None:
    assert reason(".goat/settings.json") is not None
    assert reason("sub/../.mcp.json") is not None
    assert reason("~/.claude/settings.json") is not None
    assert reason("notes/today.md") is None


@pytest.mark.parametrize(
    "path",
    [
        "/home/user/.ipython/profile_default/ipython_kernel_config.py",
        "/home/user/.ipython/profile_default/startup/00-run.py",
        "/home/user/.ipython/profile_default/startup",
        "/home/user/.ipython",
    ],
)
def test_ipython_kernel_configuration_is_protected(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IPYTHONDIR", raising=False)
    assert reason(path) is not None
    assert reason("/home/user/.ipython/profile_default/history.sqlite") is None
