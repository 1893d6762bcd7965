"""What overrides the panel's settings, named for the user (issue 22, point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_jupyter.config.overrides import overrides
from goat_jupyter.server import user_settings
from goat_jupyter.settings import load_settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOAT_MODEL", "GOAT_SMALL_MODEL", "GOAT_PERMISSION_MODE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "goat").mkdir()
    (tmp_path / "goat" / "settings.json").write_text(
        json.dumps({"model": "gpt-4o", "permission_mode": "plan"})
    )
    return tmp_path / "goat"


def _project(tmp_path: Path, data: dict[str, str]) -> Path:
    workspace = tmp_path / "project"
    (workspace / ".goat").mkdir(parents=True)
    (workspace / ".goat" / "settings.json").write_text(json.dumps(data))
    return workspace


def test_nothing_is_said_when_the_panels_values_are_in_use(home: Path, tmp_path: Path) -> None:
    assert overrides(tmp_path, {}) == []


def test_the_environment_is_named_with_the_panel_value_it_hides(home: Path, tmp_path: Path) -> None:
    [found] = overrides(tmp_path, {"GOAT_MODEL": "openai/replay"})
    assert (found.key, found.value, found.panel_value) == ("model", "openai/replay", "gpt-4o")
    assert "environment variable GOAT_MODEL" in found.text() and "'gpt-4o' is not used" in found.text()


def test_a_project_file_is_named_and_the_environment_beats_it(home: Path, tmp_path: Path) -> None:
    workspace = _project(tmp_path, {"model": "anthropic/claude-sonnet-4-5", "permission_mode": "default"})
    found = {o.key: o for o in overrides(workspace, {})}
    assert str(workspace / ".goat" / "settings.json") in found["model"].by
    assert found["permission_mode"].value == "default" and found["permission_mode"].panel_value == "plan"
    by_env = {o.key: o for o in overrides(workspace, {"GOAT_MODEL": "x/y"})}
    assert by_env["model"].by == "the environment variable GOAT_MODEL"


def test_every_override_named_is_the_value_settings_really_use(home: Path, tmp_path: Path) -> None:
    workspace = _project(tmp_path, {"small_model": "gpt-4o-mini"})
    env = {"GOAT_MODEL": "openai/replay", "GOAT_PERMISSION_MODE": "acceptEdits"}
    used = load_settings(workspace, env)
    for item in overrides(workspace, env):
        assert str(getattr(used, item.key)) == item.value


def test_the_panel_view_carries_the_overrides_and_the_default_model(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOAT_MODEL", "openai/replay")
    view = user_settings.panel_view(workspace=tmp_path)
    assert view["model"] == "gpt-4o", "the field keeps what the file says"
    assert {"key": "model", "value": "openai/replay", "by": "the environment variable GOAT_MODEL"} in view[
        "overrides"
    ]
    assert view["defaults"]["model"] == "gpt-4o-mini"


@pytest.mark.parametrize("key", ["permission_mode", "api_base"])
def test_a_project_value_waiting_for_trust_is_not_named_as_in_use(
    home: Path, tmp_path: Path, key: str
) -> None:
    value = "bypassPermissions" if key == "permission_mode" else "http://127.0.0.1:9/v1"
    workspace = _project(tmp_path, {key: value, "model": "anthropic/claude-sonnet-4-5"})
    found = {o.key: o for o in overrides(workspace, {})}
    assert "permission_mode" not in found, "an untrusted mode does not replace the panel's"
    assert found["model"].value == "anthropic/claude-sonnet-4-5"
    used = load_settings(workspace, {})
    assert used.permission_mode == "plan"
