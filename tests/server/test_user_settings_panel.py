"""The panel's settings validation in-process: any JSON body is answered with problems or written,
never an exception, and a body with a problem never reaches the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.server import user_settings
from goat_jupyter.settings import load_settings

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from([*user_settings.PANEL_KEYS, "other"])
RULES = st.sampled_from(
    ["Bash", "Bash(git diff:*)", "Read(./x/**)", "Bash(", "", "(x)", "mcp__s__*", "Edit(//tmp/**)"]
)
BODY = st.dictionaries(
    KEYS, JSON | st.dictionaries(st.sampled_from(["allow", "ask", "deny"]), st.lists(RULES, max_size=3))
)


@pytest.fixture
def goat_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path / "goat"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # the file evolves on purpose
@given(body=BODY)
def test_any_body_is_validated_without_raising_and_only_valid_ones_are_written(
    goat_home: Path, body: dict[str, Any]
) -> None:
    path = goat_home / "settings.json"
    before = path.read_bytes() if path.exists() else None
    problems = user_settings.validate(body)
    if problems:
        assert all(isinstance(p["message"], str) and p["message"] for p in problems)
        return
    view = user_settings.write(body)
    saved = json.loads(path.read_text())
    assert isinstance(saved, dict) and view["path"] == str(path)
    load_settings(goat_home, environ={})  # what the panel wrote loads
    if before is not None and "permissions" not in body:
        assert json.loads(before).get("permissions") == saved.get("permissions")


def test_every_invalid_rule_is_reported_with_its_index(goat_home: Path) -> None:
    body = {"permissions": {"deny": ["Bash(ok:*)", "Bash(", "Read(x)", ""], "allow": ["(x)"]}}
    problems = user_settings.validate(body)
    assert [(p["field"], p.get("index")) for p in problems] == [
        ("permissions.deny", 1),
        ("permissions.deny", 3),
        ("permissions.allow", 0),
    ]


def test_saved_rules_are_the_ones_the_kernel_enforces(goat_home: Path, tmp_path: Path) -> None:
    user_settings.write({"model": "gpt-4o", "permissions": {"deny": ["Read(./secret.txt)"]}})
    loaded = load_settings(tmp_path, environ={})
    assert loaded.model == "gpt-4o" and loaded.permissions.deny == ["Read(./secret.txt)"]
    user_settings.write({"model": ""})  # empty: back to the default model
    assert load_settings(tmp_path, environ={}).model == "gpt-4o-mini"


def test_budgets_saved_in_the_panel_are_the_ones_the_kernel_applies(goat_home: Path, tmp_path: Path) -> None:
    view = user_settings.write({"max_cost_per_run": 0.5, "max_tokens_per_run": 20_000})
    assert view["budgets"]["max_cost_per_run"] == 0.5 and view["budgets"]["max_cost_per_session"] is None
    loaded = load_settings(tmp_path, environ={})
    assert loaded.max_cost_per_run == 0.5 and loaded.max_tokens_per_run == 20_000
    user_settings.write({"max_cost_per_run": None})  # empty: no limit
    assert load_settings(tmp_path, environ={}).max_cost_per_run is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_cost_per_run", -1),
        ("max_cost_per_run", "0.5"),
        ("max_cost_per_run", True),
        ("max_cost_per_session", float("nan")),
        ("max_cost_per_user_per_day", float("inf")),
        ("max_tokens_per_run", 0),
        ("max_tokens_per_run", 10.5),
    ],
)
def test_invalid_budgets_are_refused_and_nothing_is_written(goat_home: Path, key: str, value: object) -> None:
    problems = user_settings.validate({key: value})
    assert [p["field"] for p in problems] == [key] and "no limit" in problems[0]["message"]
    assert not (goat_home / "settings.json").exists()


def test_a_budget_beyond_the_managed_ceiling_is_refused(
    goat_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "managed-settings.json").write_text(json.dumps({"max_cost_per_run": 1.0}))
    monkeypatch.setenv("GOAT_MANAGED_DIR", str(managed))
    assert user_settings.validate({"max_cost_per_run": 0.5}) == []
    for beyond in (2.0, None):
        [problem] = user_settings.validate({"max_cost_per_run": beyond})
        assert problem["field"] == "max_cost_per_run" and "managed" in problem["message"]
