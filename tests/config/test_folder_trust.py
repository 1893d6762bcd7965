"""Folder trust: the store, and which changes of the project files need the user again.

Property: after trusting, any widening change (a new or changed server, hook, allow rule, a wider
mode) leaves something pending and keeps it out of the settings; any narrowing change (deny and ask
rules, removing things, other keys) leaves nothing pending and changes nothing that was trusted.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.config.project import allow_key
from goat_jupyter.config.trust import (
    TRUST_ENV,
    approve_keys,
    folder_state,
    pending_items,
    revoke_folder,
    store_path,
    trust_folder,
    trusted_folders,
    untrusted_line,
)
from goat_jupyter.mcp_client import load_mcp_config
from goat_jupyter.permissions.policy import save_allow_rule
from goat_jupyter.permissions.protected import protected_reason
from goat_jupyter.settings import load_settings

BASE: dict[str, Any] = {
    "permission_mode": "acceptEdits",
    "permissions": {"allow": ["Bash(ls)"], "deny": ["Read(./secrets/**)"]},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]},
    "mcpServers": {"docs": {"command": "docs-server", "args": ["--port", "1"]}},
}
MCP_JSON: dict[str, Any] = {"mcpServers": {"db": {"command": "db-server"}, "web": {"url": "http://x/mcp"}}}
CLAUDE: dict[str, Any] = {"permissions": {"allow": ["Read"], "ask": ["WebFetch"]}}

names = st.text("abcdefgh_-", min_size=1, max_size=6)
words = st.text("abcdefgh ./*:-()", min_size=1, max_size=12)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat_home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    for var in ("GOAT_MODEL", "GOAT_SMALL_MODEL", "GOAT_PERMISSION_MODE"):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    return root


def write_project(ws: Path, goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any]) -> None:
    for path, data in ((".goat/settings.json", goat), (".mcp.json", mcp), (".claude/settings.json", claude)):
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(json.dumps(data))


def copy(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data))


def effective(ws: Path) -> tuple[Any, ...]:
    """What the project may do right now: settings' widening parts and the MCP servers that start."""
    s = load_settings(ws, environ={})
    servers = sorted(load_mcp_config(ws, s.mcp_servers, {}).servers)
    return s.permission_mode, sorted(s.permissions.allow), s.hooks, servers


# Widening changes: each adds something the trusted files did not have.
def add_server(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    mcp["mcpServers"][f"new{name}"] = {"command": word}


def change_server_args(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["mcpServers"]["docs"]["args"].append(word)


def change_server_env(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    mcp["mcpServers"]["db"]["env"] = {name: word}


def add_hook(goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str) -> None:
    goat["hooks"].setdefault("PostToolUse", []).append({"matcher": "", "hooks": [{"command": f"x{word}"}]})


def widen_hook_matcher(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["hooks"]["PreToolUse"][0]["matcher"] = f".*{name}"


def add_goat_allow(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["permissions"]["allow"].append(f"Bash({word})")


def add_claude_allow(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    claude["permissions"]["allow"].append(f"Edit({word})")


def wider_mode(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["permission_mode"] = "bypassPermissions"


def default_mode_key(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["permissions"]["defaultMode"] = "bypassPermissions"


WIDENING = [
    add_server,
    change_server_args,
    change_server_env,
    add_hook,
    widen_hook_matcher,
    add_goat_allow,
    add_claude_allow,
    wider_mode,
    default_mode_key,
]


# Narrowing (or neutral) changes: nothing the trusted files did not already allow.
def add_deny(goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str) -> None:
    goat["permissions"]["deny"].append(f"Bash({word})")


def add_ask(goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str) -> None:
    claude["permissions"]["ask"].append(f"Bash({word})")


def drop_server(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    mcp["mcpServers"].pop("db", None)


def drop_allow(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["permissions"]["allow"] = []


def drop_hooks(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["hooks"] = {}


def narrower_mode(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["permission_mode"] = "plan"


def other_keys(
    goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str
) -> None:
    goat["max_turns"] = 7
    goat["model"] = f"m{name}"


def reorder(goat: dict[str, Any], mcp: dict[str, Any], claude: dict[str, Any], name: str, word: str) -> None:
    mcp["mcpServers"] = dict(reversed(list(mcp["mcpServers"].items())))


NARROWING = [add_deny, add_ask, drop_server, drop_allow, drop_hooks, narrower_mode, other_keys, reorder]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(changes=st.lists(st.sampled_from(WIDENING), min_size=1, max_size=3), name=names, word=words)
def test_any_widening_change_asks_again_and_stays_out_until_trusted(
    ws: Path, changes: list[Any], name: str, word: str
) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    trust_folder(ws, folder_state(ws).digest)
    trusted = effective(ws)
    goat, mcp, claude = copy(BASE), copy(MCP_JSON), copy(CLAUDE)
    for change in changes:
        change(goat, mcp, claude, name, word)
    write_project(ws, goat, mcp, claude)
    pending = pending_items(ws)
    assert pending, changes
    mode, allow, hooks, servers = effective(ws)
    assert set(allow) <= set(trusted[1]) and mode in ("acceptEdits", "default")
    assert all(entry in trusted[2].get(event, []) for event, entries in hooks.items() for entry in entries)
    assert all(item.name not in servers for item in pending if item.kind == "server")
    trust_folder(ws, folder_state(ws).digest)
    assert pending_items(ws) == []
    assert set(effective(ws)[1]) == {
        r for r in (*goat["permissions"]["allow"], *claude["permissions"]["allow"])
    }


@FAST
@given(changes=st.lists(st.sampled_from(NARROWING), min_size=1, max_size=4), name=names, word=words)
def test_no_narrowing_change_invalidates_trust(ws: Path, changes: list[Any], name: str, word: str) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    trust_folder(ws, folder_state(ws).digest)
    goat, mcp, claude = copy(BASE), copy(MCP_JSON), copy(CLAUDE)
    for change in changes:
        change(goat, mcp, claude, name, word)
    write_project(ws, goat, mcp, claude)
    assert pending_items(ws) == [], changes
    s = load_settings(ws, environ={})
    assert set(s.permissions.deny) >= set(goat["permissions"]["deny"])
    assert s.permission_mode == goat["permission_mode"]


def test_untrusted_settings_keep_deny_and_ask_and_drop_the_rest(ws: Path) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    s = load_settings(ws, environ={})
    assert s.permission_mode == "default" and s.hooks == {} and s.mcp_servers == {}
    assert s.permissions.allow == [] and s.permissions.deny == ["Read(./secrets/**)"]
    assert s.permissions.ask == ["WebFetch"]
    config = load_mcp_config(ws, s.mcp_servers, {})
    assert config.servers == {} and config.untrusted == ["db", "web"]
    line = untrusted_line(ws, pending_items(ws))
    assert "\n" not in line and "3 MCP servers (db, web, docs)" in line and "1 hook" in line
    assert "2 allow rules" in line and "permission mode acceptEdits" in line and "%goat trust" in line


def test_the_store_is_per_resolved_folder_atomic_private_and_revocable(ws: Path, tmp_path: Path) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    link = tmp_path / "link"
    link.symlink_to(ws)
    trust_folder(link, folder_state(link).digest)  # the same folder by another name
    assert pending_items(ws) == [] and list(trusted_folders()) == [os.path.realpath(ws)]
    other = tmp_path / "other"
    other.mkdir()
    write_project(other, BASE, MCP_JSON, CLAUDE)
    assert pending_items(other), "trust is per folder"
    assert stat.S_IMODE(store_path().stat().st_mode) == 0o600
    assert [p.name for p in store_path().parent.iterdir()] == ["trusted_folders.json"]
    assert revoke_folder(ws) and not revoke_folder(ws)
    assert pending_items(ws) and load_settings(ws, environ={}).permission_mode == "default"


def test_a_broken_store_trusts_nothing(ws: Path) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    for text in ("{", "[]", '{"folders": []}', json.dumps({"folders": {str(ws): {"approved": "all"}}})):
        store_path().parent.mkdir(parents=True, exist_ok=True)
        store_path().write_text(text)
        assert len(pending_items(ws)) == 7, text


def test_the_environment_variable_trusts_the_named_folder_only(ws: Path, tmp_path: Path) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    assert load_settings(ws, environ={TRUST_ENV: "1"}).permission_mode == "acceptEdits"
    assert load_settings(ws, environ={TRUST_ENV: str(ws)}).permission_mode == "acceptEdits"
    assert load_settings(ws, environ={TRUST_ENV: str(tmp_path)}).permission_mode == "default"
    assert load_settings(ws, environ={TRUST_ENV: "0"}).permission_mode == "default"
    assert not store_path().exists(), "nothing is remembered"


def test_always_allow_approves_exactly_the_saved_rule(ws: Path) -> None:
    write_project(ws, BASE, MCP_JSON, CLAUDE)
    save_allow_rule(ws, "Bash(npm test)")
    s = load_settings(ws, environ={})
    assert s.permissions.allow == ["Bash(npm test)"] and s.permission_mode == "default"
    approve_keys(ws, [allow_key("Read")])
    assert sorted(load_settings(ws, environ={}).permissions.allow) == ["Bash(npm test)", "Read"]


def test_the_workspace_at_home_is_the_users_own_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".goat").mkdir(parents=True)
    monkeypatch.setenv("GOAT_HOME", str(home / ".goat"))
    monkeypatch.setenv("HOME", str(home))
    (home / ".goat/settings.json").write_text(json.dumps({"permission_mode": "acceptEdits"}))
    assert load_settings(home, environ={}).permission_mode == "acceptEdits"
    assert pending_items(home) == []


def test_the_agent_cannot_write_the_store(ws: Path) -> None:
    trust_folder(ws, folder_state(ws).digest)
    reason = protected_reason(store_path(), ws)
    assert reason is not None and "trusted_folders.json" in reason
