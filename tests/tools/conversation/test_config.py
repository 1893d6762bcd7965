"""Config: read and set runtime settings on the session, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.settings import RUNTIME_KEYS
from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def test_read_one_setting(registry: Registry) -> None:
    out = await registry.call("Config", {"setting": "model"})
    assert not out.is_error
    assert out.content == f'model = "{registry.session.settings.model}"'
    assert out.metadata == {"setting": "model", "value": registry.session.settings.model}


async def test_set_changes_the_session_settings(registry: Registry) -> None:
    out = await registry.call("Config", {"setting": "model", "value": "openai/gpt-4o"})
    assert not out.is_error, out.content
    assert registry.session.settings.model == "openai/gpt-4o"
    assert '"openai/gpt-4o"' in out.content and '"gpt-4o-mini"' in out.content
    assert out.metadata["previous"] == "gpt-4o-mini"


async def test_values_are_coerced_to_the_setting_type(registry: Registry) -> None:
    await registry.call("Config", {"setting": "max_turns", "value": "12"})
    await registry.call("Config", {"setting": "show_usage", "value": "false"})
    await registry.call("Config", {"setting": "temperature", "value": 0.5})
    settings = registry.session.settings
    assert settings.max_turns == 12 and settings.show_usage is False and settings.temperature == 0.5
    out = await registry.call("Config", {"setting": "temperature", "value": "none"})
    assert not out.is_error and settings.temperature is None and "null" in out.content


async def test_permission_mode_is_set_and_checked(registry: Registry) -> None:
    out = await registry.call("Config", {"setting": "permission_mode", "value": "acceptEdits"})
    assert not out.is_error and registry.session.settings.permission_mode == "acceptEdits"
    bad = await registry.call("Config", {"setting": "permission_mode", "value": "yolo"})
    assert bad.error_code == "INVALID_INPUT"
    assert all(
        mode in bad.content for mode in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
    )
    assert registry.session.settings.permission_mode == "acceptEdits"


async def test_bad_values_list_what_is_valid(registry: Registry) -> None:
    cases = {
        "max_turns": (0, "1 to 1000"),
        "show_usage": ("maybe", "true or false"),
        "max_tokens": (True, "whole number"),
        "temperature": (5, "0 to 2"),
    }
    for key, (value, hint) in cases.items():
        before = getattr(registry.session.settings, key)
        out = await registry.call("Config", {"setting": key, "value": value})
        assert out.is_error and out.error_code == "INVALID_INPUT", key
        assert out.content.startswith("Error: ") and hint in out.content and key in out.content
        assert getattr(registry.session.settings, key) == before


async def test_unknown_setting_lists_valid_ones(registry: Registry) -> None:
    for args in ({"setting": "colour", "value": "red"}, {"setting": "colour"}):
        out = await registry.call("Config", args)
        assert out.error_code == "INVALID_INPUT" and "colour" in out.content
        assert all(key in out.content for key in RUNTIME_KEYS)


async def test_list_all_settings(registry: Registry) -> None:
    out = await registry.call("Config", {"setting": "all"})
    assert not out.is_error
    lines = out.content.splitlines()[1:]
    assert [line.split(" = ")[0] for line in lines] == list(RUNTIME_KEYS)
    assert out.metadata["settings"]["max_turns"] == registry.session.settings.max_turns


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("api_base", "https://attacker.example/v1"),
        ("api_base", None),
        ("tool_profile", "full"),
        ("action_style", "code"),
        ("API_BASE", "x"),
    ],
)
async def test_the_model_cannot_move_the_endpoint_or_the_tool_profile(
    registry: Registry, setting: str, value: object
) -> None:
    out = await registry.call("Config", {"setting": setting, "value": value})
    assert out.is_error
    assert registry.session.settings.api_base is None and registry.session.settings.tool_profile == "auto"
    assert registry.session.settings.action_style == "auto"
