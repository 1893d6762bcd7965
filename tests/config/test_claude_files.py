"""Claude Code's files: rules joined below goat's own, instructions from ~/.claude and parent folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_jupyter.agent.prompts import session_context
from goat_jupyter.agent.session import Session
from goat_jupyter.config.claude_files import claude_permissions, instruction_files, instruction_folders
from goat_jupyter.config.sources import describe_sources
from goat_jupyter.config.trust import folder_state, trust_folder
from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.settings import load_settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GOAT_HOME", str(home / ".goat"))
    for var in ("GOAT_MODEL", "GOAT_SMALL_MODEL", "GOAT_PERMISSION_MODE"):
        monkeypatch.delenv(var, raising=False)
    return home


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def rules(**lists: list[str]) -> dict[str, object]:
    return {"permissions": lists}


def test_rules_of_all_three_claude_files_are_joined_in_priority_order(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(home / ".claude/settings.json", rules(deny=["Glob"]))
    write(ws / ".claude/settings.json", rules(deny=["Read(./secret.txt)"], allow=["Bash(ls)"]))
    write(ws / ".claude/settings.local.json", rules(ask=["WebFetch"]))
    assert claude_permissions(ws) == {
        "permissions": {"deny": ["Glob", "Read(./secret.txt)"], "allow": ["Bash(ls)"], "ask": ["WebFetch"]}
    }
    settings = load_settings(ws, environ={})
    assert settings.permissions.deny == ["Glob", "Read(./secret.txt)"]
    assert settings.permissions.allow == []  # a project's allow rule waits for folder trust
    trust_folder(ws, folder_state(ws).digest)
    assert load_settings(ws, environ={}).permissions.allow == ["Bash(ls)"]


def test_goat_files_come_after_claude_files_and_a_claude_deny_beats_a_goat_allow(
    home: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    write(ws / ".claude/settings.json", rules(deny=["Read(./secret.txt)"]))
    write(ws / ".goat/settings.json", {"permissions": {"allow": ["Read(./secret.txt)"]}, "max_turns": 9})
    trust_folder(ws, folder_state(ws).digest)
    settings = load_settings(ws, environ={})
    assert settings.permissions.allow == ["Read(./secret.txt)"] and settings.max_turns == 9
    context = PermissionContext(
        workspace=ws, allow=settings.permissions.allow, deny=settings.permissions.deny, home=home
    )
    for spelling in ("secret.txt", "./secret.txt", str(ws / "secret.txt"), str(ws / "sub/../secret.txt")):
        decision = evaluate("Read", {"file_path": spelling}, "read_only", context)
        assert decision.behavior == "deny", spelling


def test_claude_files_cannot_set_the_mode_or_anything_but_rules(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(
        ws / ".claude/settings.json",
        {
            "permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash", 3, None]},
            "model": "claude-x",
            "hooks": {"PreToolUse": []},
        },
    )
    trust_folder(ws, folder_state(ws).digest)
    settings = load_settings(ws, environ={})
    assert settings.permission_mode == "default"
    assert settings.model == "gpt-4o-mini" and settings.hooks == {}
    assert settings.permissions.allow == ["Bash"]


@pytest.mark.parametrize(
    "content", ["", "{", "[1, 2]", '{"permissions": 5}', '{"permissions": {"deny": "Read"}}', "\x00\xff"]
)
def test_broken_claude_files_are_ignored(home: Path, tmp_path: Path, content: str) -> None:
    ws = tmp_path / "ws"
    write(ws / ".claude/settings.json", content)
    write(ws / ".goat/settings.json", {"permissions": {"deny": ["Bash"]}})
    assert load_settings(ws, environ={}).permissions.deny == ["Bash"]


def test_workspace_equal_to_home_reads_the_file_once(home: Path) -> None:
    write(home / ".claude/settings.json", rules(deny=["Glob"]))
    assert claude_permissions(home) == {"permissions": {"deny": ["Glob"]}}


def test_instructions_from_home_parents_up_to_the_git_root_and_local_files(
    home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "CLAUDE.md"  # above the repository: not read
    write(outside, "OUTSIDE")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    ws = repo / "a" / "b"
    ws.mkdir(parents=True)
    files = [
        write(home / ".claude/CLAUDE.md", "HOME-RULES"),
        write(repo / "CLAUDE.md", "ROOT-RULES"),
        write(repo / "a/AGENTS.md", "A-AGENTS"),
        write(ws / "CLAUDE.md", "WS-RULES"),
        write(ws / "CLAUDE.local.md", "LOCAL-RULES"),
    ]
    assert instruction_folders(ws) == [repo, repo / "a", ws]
    assert instruction_files(ws) == files
    prompt = session_context(Session(workspace=ws, settings=load_settings(ws, environ={})))
    positions = [
        prompt.index(text) for text in ("HOME-RULES", "ROOT-RULES", "A-AGENTS", "WS-RULES", "LOCAL-RULES")
    ]
    assert positions == sorted(positions)
    assert "OUTSIDE" not in prompt
    listing = describe_sources(ws)
    assert all(str(path) in listing for path in files)


def test_outside_a_repository_only_the_workspace_folder_counts(home: Path, tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "PARENT")
    ws = tmp_path / "ws"
    write(ws / "CLAUDE.local.md", "LOCAL")
    assert instruction_files(ws) == [ws / "CLAUDE.local.md"]


def test_a_worktree_git_file_marks_the_root_and_folders_named_like_files_are_skipped(
    home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "wt"
    write(repo / ".git", "gitdir: /elsewhere")
    (repo / "CLAUDE.md").mkdir()  # a folder, not a file
    write(repo / "sub/CLAUDE.local.md", "X")
    assert instruction_files(repo / "sub") == [repo / "sub/CLAUDE.local.md"]


def test_status_lists_the_settings_files_read(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    read = write(ws / ".claude/settings.local.json", rules(allow=["Bash(ls)"]))
    write(ws / ".claude/settings.json", "not json")
    listing = describe_sources(ws)
    assert str(read) in listing
    assert str(ws / ".claude/settings.json") not in listing


@pytest.mark.parametrize(
    ("deny_in", "allow_in"),
    [
        ("home", ".claude/settings.local.json"),
        (".claude/settings.json", ".claude/settings.local.json"),
        (".claude/settings.local.json", "home"),
        (".claude/settings.local.json", ".goat/settings.json"),
    ],
)
def test_a_deny_in_any_file_beats_an_allow_in_any_other(
    home: Path, tmp_path: Path, deny_in: str, allow_in: str
) -> None:
    ws = tmp_path / "ws"

    def place(where: str) -> Path:
        return home / ".claude/settings.json" if where == "home" else ws / where

    write(place(deny_in), rules(deny=["Bash(curl:*)"]))
    write(place(allow_in), rules(allow=["Bash(curl:*)", "Bash"]))
    trust_folder(ws, folder_state(ws).digest)  # the project's allow rules apply: the deny still wins
    settings = load_settings(ws, environ={})
    context = PermissionContext(
        workspace=ws, allow=settings.permissions.allow, deny=settings.permissions.deny, home=home
    )
    for command in ("curl x", "ls && curl x", "FOO=1 curl x", "/usr/bin/curl x", "echo $(curl x)"):
        assert evaluate("Bash", {"command": command}, "spawns", context).behavior == "deny", command
    assert evaluate("Bash", {"command": "ls"}, "spawns", context).behavior == "allow"
