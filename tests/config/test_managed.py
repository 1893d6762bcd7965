"""Managed settings: the administrator's layer above every other one. No value from the user's file,
the project's file, the environment or a runtime change gets past a managed key."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.agent import ledger
from goat_jupyter.agent.spend import BudgetReachedError, Limits, Prices, RunSpend, answer_cap
from goat_jupyter.config.managed import MODE_RANK, load_managed, managed_files
from goat_jupyter.config.trust import folder_state, trust_folder
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.permissions.protected import protected_reason
from goat_jupyter.settings import PERMISSION_MODES, Settings, coerce_setting, load_settings
from goat_jupyter.tools.builtin import builtin_tools
from goat_jupyter.tools.registry import Registry

POLICY: dict[str, Any] = {
    "allowed_models": ["openai/gpt-4o*", "gpt-4o-mini"],
    "disabled_tools": ["WebFetch", "mcp__evil__*"],
    "max_permission_mode": "acceptEdits",
    "permissions": {"deny": ["Bash(curl:*)"], "ask": ["Write(secrets/**)"]},
    "allowed_mcp_servers": ["docs"],
    "max_cost_per_run": 0.5,
    "max_cost_per_user_per_day": 2,
    "output_style": "tutor",
}


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "managed"
    write_json(folder / "managed-settings.json", POLICY)
    monkeypatch.setenv("GOAT_MANAGED_DIR", str(folder))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GOAT_HOME", str(home))
    for var in ("GOAT_MODEL", "GOAT_SMALL_MODEL", "GOAT_PERMISSION_MODE"):
        monkeypatch.delenv(var, raising=False)
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".goat").mkdir(parents=True)
    return path


def env_with(managed: Path, **extra: str) -> dict[str, str]:
    return {"GOAT_MANAGED_DIR": str(managed), **extra}


def test_no_files_no_policy(tmp_path: Path) -> None:
    policy = load_managed({"GOAT_MANAGED_DIR": str(tmp_path / "none")})
    assert not policy.active and policy.refusal("permission_mode", "bypassPermissions") is None


def test_fragments_apply_after_the_file_and_add_to_its_lists(managed: Path) -> None:
    write_json(managed / "managed-settings.d" / "20-more.json", {"disabled_tools": ["Bash"]})
    write_json(managed / "managed-settings.d" / "10-style.json", {"output_style": "explain"})
    (managed / "managed-settings.d" / "notes.txt").write_text("{}")
    files = managed_files()
    assert [p.name for p in files] == ["managed-settings.json", "10-style.json", "20-more.json"]
    policy = load_managed()
    assert policy.disabled_tools == ["WebFetch", "mcp__evil__*", "Bash"]
    assert policy.forced["output_style"] == "explain"
    assert str(managed / "managed-settings.json") in policy.reason


def test_a_fragment_folder_alone_is_a_policy(tmp_path: Path) -> None:
    write_json(tmp_path / "m" / "managed-settings.d" / "a.json", {"max_permission_mode": "default"})
    assert not load_managed({"GOAT_MANAGED_DIR": str(tmp_path / "m")}).mode_allowed("acceptEdits")


def test_a_typo_in_the_maximum_mode_narrows_to_plan(tmp_path: Path) -> None:
    write_json(tmp_path / "m" / "managed-settings.json", {"max_permission_mode": "acceptedits"})
    policy = load_managed({"GOAT_MANAGED_DIR": str(tmp_path / "m")})
    assert policy.mode_allowed("plan") and not policy.mode_allowed("default")


def test_user_project_and_environment_cannot_go_beyond(managed: Path, ws: Path) -> None:
    write_json(
        ws.parent / "home" / "settings.json",
        {
            "permission_mode": "bypassPermissions",
            "max_cost_per_run": 5,
            "output_style": "default",
            "mcpServers": {"evil": {"command": "x"}, "docs": {"command": "y"}},
            "permissions": {"allow": ["Bash(curl:*)"]},
        },
    )
    write_json(ws / ".goat" / "settings.json", {"max_cost_per_user_per_day": 50, "permission_mode": "plan"})
    trust_folder(ws, folder_state(ws).digest)
    got = load_settings(ws, environ=env_with(managed, GOAT_PERMISSION_MODE="bypassPermissions"))
    assert got.permission_mode == "default"
    assert got.max_cost_per_run == 0.5 and got.max_cost_per_user_per_day == 2
    assert got.output_style == "tutor"
    assert list(got.mcp_servers) == ["docs"]
    assert "Bash(curl:*)" in got.permissions.deny and "Write(secrets/**)" in got.permissions.ask
    notes = " | ".join(got.managed_notes)
    for word in ("bypassPermissions", "max_cost_per_run=5", "max_cost_per_user_per_day=50", "'evil'"):
        assert word in notes, notes
    assert "the managed policy (" in notes


def test_a_lower_budget_and_a_narrower_mode_are_kept(managed: Path, ws: Path) -> None:
    write_json(ws.parent / "home" / "settings.json", {"max_cost_per_run": 0.1, "permission_mode": "plan"})
    got = load_settings(ws, environ=env_with(managed))
    assert got.max_cost_per_run == 0.1 and got.permission_mode == "plan" and got.managed_notes == []


def test_a_model_outside_the_allow_list_is_named(managed: Path, ws: Path) -> None:
    write_json(ws.parent / "home" / "settings.json", {"model": "anthropic/claude-opus-4"})
    got = load_settings(ws, environ=env_with(managed))
    assert any("anthropic/claude-opus-4" in note for note in got.managed_notes)


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("model", "anthropic/claude-opus-4", "not allowed"),
        ("model", "openai/gpt-4o-evil/../x", None),  # allowed: the glob says so
        ("small_model", "mistral/large", "not allowed"),
        ("permission_mode", "bypassPermissions", "beyond acceptEdits"),
        ("max_cost_per_run", "0.51", "above 0.5"),
        ("max_cost_per_run", "none", "above 0.5"),
        ("max_cost_per_user_per_day", "3", "above 2"),
        ("max_cost_per_user_per_day", "None", "above 2"),
        ("output_style", "default", "cannot be changed"),
    ],
)
def test_runtime_changes_are_refused_with_the_managed_reason(
    managed: Path, key: str, value: str, words: str | None
) -> None:
    if words is None:
        assert coerce_setting(key, value) == value
        return
    with pytest.raises(InvalidInputError) as caught:
        coerce_setting(key, value)
    assert words in caught.value.message and "managed policy (" in caught.value.message


def test_runtime_changes_within_the_policy_pass(managed: Path) -> None:
    assert coerce_setting("permission_mode", "plan") == "plan"
    assert coerce_setting("max_cost_per_run", "0.25") == 0.25
    assert coerce_setting("output_style", "tutor") == "tutor"


layer_values = st.fixed_dictionaries(
    {},
    optional={
        "permission_mode": st.sampled_from(PERMISSION_MODES),
        "max_cost_per_run": st.one_of(st.none(), st.floats(0, 100)),
        "max_cost_per_user_per_day": st.one_of(st.none(), st.floats(0, 100)),
        "output_style": st.sampled_from(["default", "explain", "tutor"]),
        "mcpServers": st.dictionaries(st.sampled_from(["docs", "evil", "x"]), st.just({"command": "c"})),
        "permissions": st.fixed_dictionaries(
            {"deny": st.just([]), "ask": st.just([]), "defaultMode": st.sampled_from(PERMISSION_MODES)}
        ),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=layer_values, project=layer_values, env_mode=st.sampled_from(["", *PERMISSION_MODES]))
def test_no_combination_of_layers_gets_past_a_managed_key(
    managed: Path, ws: Path, user: dict[str, Any], project: dict[str, Any], env_mode: str
) -> None:
    write_json(ws.parent / "home" / "settings.json", user)
    write_json(ws / ".goat" / "settings.json", project)
    trust_folder(ws, folder_state(ws).digest)
    got = load_settings(ws, environ=env_with(managed, GOAT_PERMISSION_MODE=env_mode))
    assert_within_policy(got)


def assert_within_policy(got: Settings) -> None:
    assert MODE_RANK[got.permission_mode] <= MODE_RANK["acceptEdits"]
    assert got.max_cost_per_run is not None and got.max_cost_per_run <= 0.5
    assert got.max_cost_per_user_per_day is not None and got.max_cost_per_user_per_day <= 2
    assert got.output_style == "tutor"
    assert set(got.mcp_servers) <= {"docs"}
    assert {"Bash(curl:*)"} <= set(got.permissions.deny) and {"Write(secrets/**)"} <= set(got.permissions.ask)
    assert got.permissions.default_mode in (None, "default", "plan", "dontAsk", "acceptEdits")


async def test_disabled_tools_are_not_offered_and_refused_when_called(managed: Path, ws: Path) -> None:
    registry = Registry(cwd=ws)
    for tool in builtin_tools():
        registry.register(tool)
    offered = {entry["function"]["name"] for entry in registry.llm_tools()}
    assert "WebFetch" not in offered and "Read" in offered
    output = await registry.call("WebFetch", {"url": "http://127.0.0.1:9/", "prompt": "x"})
    assert output.is_error and "disabled by the managed policy (" in output.content


def test_mcp_tool_patterns_match_every_tool_of_the_server(managed: Path) -> None:
    policy = load_managed()
    assert policy.tool_disabled("mcp__evil__run") and policy.tool_disabled("mcp__evil__")
    assert not policy.tool_disabled("mcp__evilish__run") and not policy.tool_disabled("webfetch")


def test_the_managed_folders_are_protected(managed: Path, ws: Path) -> None:
    for path in (managed / "managed-settings.json", managed / "managed-settings.d" / "x.json", managed):
        reason = protected_reason(path, ws)
        assert reason is not None and "managed settings" in reason
    assert protected_reason(Path("/etc/goat/managed-settings.json"), ws) is not None


def test_the_ledger_adds_up_across_threads(tmp_path: Path) -> None:
    path = tmp_path / "usage" / "daily-cost.json"
    workers = [
        threading.Thread(target=lambda: [ledger.record(0.01, path) for _ in range(20)]) for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert ledger.spent_today(path) == pytest.approx(0.8)
    assert list(json.loads(path.read_text())) == [ledger.today()]


def test_the_ledger_keeps_a_month(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    write_json(path, {f"2020-01-{day:02d}": 1.0 for day in range(1, 32)} | {"junk": "x"})
    ledger.record(0.5, path)
    kept = json.loads(path.read_text())
    assert len(kept) == ledger.KEEP_DAYS and kept[ledger.today()] == 0.5 and "2020-01-01" not in kept


def test_the_daily_budget_stops_with_one_line_naming_the_policy(managed: Path) -> None:
    limits = Limits(cost_per_user_per_day=2.0)
    prices = Prices(prompt=1e-6, answer=1e-6)
    assert answer_cap(limits, RunSpend(), 0.0, 1000, prices, day_cost=1.0) is not None
    with pytest.raises(BudgetReachedError) as caught:
        answer_cap(limits, RunSpend(), 0.0, 1000, prices, day_cost=1.9999)
    line = str(caught.value)
    assert "\n" not in line and "(max_cost_per_user_per_day)" in line and "managed policy (" in line


def test_a_users_own_daily_budget_says_how_to_raise_it(tmp_path: Path) -> None:
    limits = Limits(cost_per_user_per_day=1.0)
    with pytest.raises(BudgetReachedError) as caught:
        answer_cap(limits, RunSpend(), 0.0, 10, Prices(1e-6, 1e-6), day_cost=1.0)
    assert "%goat config max_cost_per_user_per_day=2.00" in str(caught.value)


def test_a_managed_deny_rule_names_the_policy_when_it_blocks(managed: Path, ws: Path) -> None:
    got = load_settings(ws, environ=env_with(managed))
    context = PermissionContext(
        mode="bypassPermissions", workspace=ws, allow=["Bash(curl:*)"], deny=got.permissions.deny
    )
    decision = evaluate("Bash", {"command": "curl http://x"}, "mutating", context)
    assert decision.behavior == "deny" and "managed policy (" in decision.reason


def test_the_panel_shows_managed_fields_and_refuses_what_goes_beyond(managed: Path) -> None:
    from goat_jupyter.server import user_settings

    write_json(managed / "managed-settings.d" / "model.json", {"small_model": "gpt-4o-mini"})
    fields = user_settings.panel_view()["managed"]
    assert fields["small_model"]["locked"] and "managed policy (" in fields["small_model"]["reason"]
    assert not fields["model"]["locked"] and "openai/gpt-4o*" in fields["model"]["reason"]
    assert "At most acceptEdits" in fields["permission_mode"]["reason"]
    assert "Bash(curl:*)" in fields["permissions"]["reason"]
    body = {
        "model": "anthropic/claude-opus-4",
        "small_model": "openai/gpt-4o",
        "permission_mode": "bypassPermissions",
        "mcpServers": {"evil": {"command": "x"}},
    }
    problems = user_settings.validate(body)
    assert {p["field"] for p in problems} == set(body)
    assert all("managed policy (" in p["message"] for p in problems)
    assert user_settings.validate({"model": "openai/gpt-4o", "permission_mode": "acceptEdits"}) == []


def test_servers_of_a_trusted_mcp_json_outside_the_list_do_not_start(managed: Path, ws: Path) -> None:
    from goat_jupyter.mcp_client.config import load_mcp_config

    write_json(ws / ".mcp.json", {"mcpServers": {"evil": {"command": "x"}, "docs": {"command": "y"}}})
    trust_folder(ws, folder_state(ws).digest)
    config = load_mcp_config(ws, {"other": {"command": "z"}}, env_with(managed))
    assert list(config.servers) == ["docs"]
    assert sum("not allowed by the managed policy (" in p for p in config.problems) == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [("permission_mode", "bypassPermissions"), ("model", "mistral/large"), ("max_cost_per_run", "none")],
)
async def test_the_config_tool_cannot_go_beyond(managed: Path, ws: Path, key: str, value: str) -> None:
    from goat_jupyter.tools import default_registry

    registry = default_registry(cwd=ws)
    registry.session.settings = load_settings(ws, environ=env_with(managed))
    before = getattr(registry.session.settings, key)
    output = await registry.call("Config", {"setting": key, "value": value})
    assert output.is_error and "managed policy (" in output.content, output.content
    assert getattr(registry.session.settings, key) == before


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "", '"a string"'])
def test_an_unreadable_managed_file_stops_goat_instead_of_lifting_the_policy(
    managed: Path, ws: Path, text: str
) -> None:
    (managed / "managed-settings.d").mkdir()
    (managed / "managed-settings.d" / "typo.json").write_text(text, encoding="utf-8")
    policy = load_managed()
    assert policy.active
    refused = policy.broken_text()
    assert refused is not None and "typo.json" in refused and "does not run" in refused


def test_a_managed_value_goat_cannot_use_stops_goat(managed: Path, ws: Path) -> None:
    write_json(managed / "managed-settings.json", {"max_turns": "many", "max_permission_mode": "default"})
    settings = load_settings(ws)
    assert settings.managed_broken is not None and "does not run" in settings.managed_broken


def test_a_valid_policy_is_not_broken(managed: Path, ws: Path) -> None:
    assert load_managed().broken_text() is None
    assert load_settings(ws).managed_broken is None
