"""Settings layering (user file < workspace file < environment), fallbacks and coerce_setting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.config.trust import folder_state, trust_folder
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.settings import (
    RUNTIME_KEYS,
    USER_KEYS,
    VALUE_HINTS,
    Settings,
    coerce_setting,
    load_settings,
    user_settings_path,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private GOAT_HOME so the real ~/.goat never leaks in."""
    goat_home = tmp_path / "home"
    goat_home.mkdir()
    monkeypatch.setenv("GOAT_HOME", str(goat_home))
    for var in ("GOAT_MODEL", "GOAT_SMALL_MODEL", "GOAT_PERMISSION_MODE"):
        monkeypatch.delenv(var, raising=False)
    return goat_home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".goat").mkdir(parents=True)
    return path


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def test_defaults_without_files(home: Path, workspace: Path) -> None:
    assert load_settings(workspace, environ={}) == Settings()
    assert user_settings_path() == home / "settings.json"


def test_user_file_over_defaults(home: Path, workspace: Path) -> None:
    write_json(home / "settings.json", {"model": "user-model", "max_turns": 7, "unknownKey": 1})
    settings = load_settings(workspace, environ={})
    assert settings.model == "user-model" and settings.max_turns == 7


def test_workspace_file_over_user_file(home: Path, workspace: Path) -> None:
    write_json(
        home / "settings.json",
        {"model": "user-model", "max_turns": 7, "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}},
    )
    write_json(
        workspace / ".goat" / "settings.json",
        {"model": "ws-model", "permissions": {"allow": ["Edit(src/**)"], "defaultMode": "acceptEdits"}},
    )
    untrusted = load_settings(workspace, environ={})
    assert untrusted.model == "ws-model" and untrusted.permissions.deny == ["Bash(rm:*)"]
    assert untrusted.permissions.allow == ["Read"] and untrusted.permission_mode == "default"
    trust_folder(workspace, folder_state(workspace).digest)
    settings = load_settings(workspace, environ={})
    assert settings.model == "ws-model" and settings.max_turns == 7
    assert settings.permissions.allow == ["Read", "Edit(src/**)"]
    assert settings.permissions.deny == ["Bash(rm:*)"]
    assert settings.permissions.default_mode == "acceptEdits"


def test_environment_over_files(home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_json(home / "settings.json", {"model": "user-model", "permission_mode": "plan"})
    write_json(workspace / ".goat" / "settings.json", {"model": "ws-model", "small_model": "ws-small"})
    env = {"GOAT_MODEL": "env-model", "GOAT_PERMISSION_MODE": "dontAsk"}
    settings = load_settings(workspace, environ=env)
    assert settings.model == "env-model" and settings.permission_mode == "dontAsk"
    assert settings.small_model == "ws-small"
    monkeypatch.setenv("GOAT_SMALL_MODEL", "env-small")
    assert load_settings(workspace).small_model == "env-small"


def test_mcp_servers_alias(home: Path, workspace: Path) -> None:
    servers = {"time": {"command": "mcp-server-time", "args": []}}
    write_json(workspace / ".goat" / "settings.json", {"mcpServers": servers})
    assert load_settings(workspace, environ={}).mcp_servers == {}
    trust_folder(workspace, folder_state(workspace).digest)
    assert load_settings(workspace, environ={}).mcp_servers == servers


def test_a_project_adds_to_the_users_hooks_and_servers_and_cannot_drop_them(
    home: Path, workspace: Path
) -> None:
    mine = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}
    theirs = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "log"}]}]}
    write_json(home / "settings.json", {"hooks": mine, "mcpServers": {"a": {"command": "a"}}})
    write_json(
        workspace / ".goat" / "settings.json", {"hooks": theirs, "mcpServers": {"b": {"command": "b"}}}
    )
    assert load_settings(workspace, environ={}).hooks == mine
    trust_folder(workspace, folder_state(workspace).digest)
    settings = load_settings(workspace, environ={})
    assert settings.hooks == {"PreToolUse": [*mine["PreToolUse"], *theirs["PreToolUse"]]}
    assert settings.mcp_servers == {"a": {"command": "a"}, "b": {"command": "b"}}
    write_json(workspace / ".goat" / "settings.json", {"hooks": {}, "mcpServers": {}})
    assert load_settings(workspace, environ={}).hooks == mine


def test_broken_file_is_skipped(home: Path, workspace: Path) -> None:
    (home / "settings.json").write_text("{ not json", encoding="utf-8")
    write_json(workspace / ".goat" / "settings.json", {"model": "ws-model"})
    assert load_settings(workspace, environ={}).model == "ws-model"
    write_json(workspace / ".goat" / "settings.json", ["not", "an", "object"])
    assert load_settings(workspace, environ={}) == Settings()


def test_invalid_values_fall_back_to_defaults_plus_env(home: Path, workspace: Path) -> None:
    write_json(home / "settings.json", {"model": "user-model", "max_turns": "lots"})
    settings = load_settings(workspace, environ={"GOAT_MODEL": "env-model"})
    assert settings.max_turns == Settings().max_turns
    assert settings.model == "env-model"


def test_coerce_setting_converts_values() -> None:
    assert coerce_setting("max_turns", "25") == 25
    assert coerce_setting("show_usage", "no") is False
    assert coerce_setting("temperature", "0.3") == 0.3
    assert coerce_setting("small_model", "none") is None
    assert coerce_setting("model", "  ollama/llama3 ") == "ollama/llama3"


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("colour", "red", "Valid settings: " + ", ".join(RUNTIME_KEYS)),
        ("permission_mode", "yolo", "bypassPermissions"),
        ("max_turns", 0, "1 to 1000"),
        ("max_turns", 2.5, "whole number"),
        ("max_tokens", True, "whole number"),
        ("show_usage", "perhaps", "true or false"),
        ("model", None, "model name"),
        ("temperature", 9, "0 to 2"),
    ],
)
def test_coerce_setting_errors(key: str, value: object, expected: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        coerce_setting(key, value)
    assert expected in info.value.message and key in info.value.message


def test_every_runtime_key_is_described() -> None:
    assert set(VALUE_HINTS) == set(RUNTIME_KEYS + USER_KEYS)
    assert all(key in Settings.model_fields for key in RUNTIME_KEYS)


@pytest.mark.parametrize("key", USER_KEYS)
def test_user_only_keys_are_refused_unless_the_user_sets_them(key: str) -> None:
    assert key not in RUNTIME_KEYS  # the Config tool (the model) can never change them
    with pytest.raises(InvalidInputError):
        coerce_setting(key, "lean")


def test_user_only_keys_are_accepted_from_the_user() -> None:
    keys = RUNTIME_KEYS + USER_KEYS
    assert coerce_setting("api_base", " http://127.0.0.1:8089/v1 ", keys) == "http://127.0.0.1:8089/v1"
    assert coerce_setting("api_base", "none", keys) is None
    assert coerce_setting("tool_profile", "lean", keys) == "lean"
    assert coerce_setting("text_tool_calls", False, keys) is False
    assert coerce_setting("context_window", 32768, keys) == 32768
    with pytest.raises(InvalidInputError, match="auto, full or lean"):
        coerce_setting("tool_profile", "tiny", keys)
    assert coerce_setting("action_style", " code ", keys) == "code"
    with pytest.raises(InvalidInputError, match="auto, tools or code"):
        coerce_setting("action_style", "cells", keys)
