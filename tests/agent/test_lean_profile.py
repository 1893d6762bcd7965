"""The lean profile for small models (issue 23): core tools, short definitions, chosen automatically
for endpoints on this machine and small windows, overridable, and measured against the full set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.agent.context import tools_tokens
from goat_jupyter.agent.lean import LEAN_TOOLS, profile_for
from goat_jupyter.agent.llm import llm_client_for
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from tests.agent_helpers import make_agent, text_turn

CORE = {"Read", "Write", "Edit", "Glob", "Grep", "Bash", "NotebookEdit", "TodoWrite"}
MISREAD = {"model", "subagent_type", "mode", "run_in_background", "team_name", "resume", "max_turns"}


async def first_request(workspace: Path, profile: str) -> dict[str, Any]:
    with ReplayServer([text_turn("hi")]) as server:
        rig = make_agent(workspace, server.url)
        rig.session.settings.tool_profile = profile  # type: ignore[assignment]
        rig.session.settings.action_style = "tools"  # the lean tool set (code style: test_code_actions.py)
        await rig.agent.run("hello")
        return server.requests[0]


def property_names(schema: Any) -> set[str]:
    """Every property name anywhere in a schema."""
    names: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():  # pyright: ignore[reportUnknownVariableType]
            if key == "properties" and isinstance(value, dict):
                names.update(str(k) for k in value)  # pyright: ignore[reportUnknownVariableType]
            names |= property_names(value)
    elif isinstance(schema, list):
        for item in schema:  # pyright: ignore[reportUnknownVariableType]
            names |= property_names(item)
    return names


async def test_the_lean_profile_offers_core_tools_only_and_costs_far_fewer_tokens(tmp_path: Path) -> None:
    lean, full = await first_request(tmp_path, "lean"), await first_request(tmp_path, "full")
    lean_names = {t["function"]["name"] for t in lean["tools"]}
    assert lean_names == CORE  # no kernel here, so RunCell and KernelInspect are not offered
    assert lean_names < {t["function"]["name"] for t in full["tools"]}
    assert not property_names(lean["tools"]) & MISREAD
    for tool in lean["tools"]:
        assert len(tool["function"]["description"]) <= 120
    lean_tokens, full_tokens = tools_tokens(lean["tools"]), tools_tokens(full["tools"])
    assert lean_tokens * 3 < full_tokens, (lean_tokens, full_tokens)  # full defers its rare tools
    assert len(json.dumps(lean["messages"][0])) < len(json.dumps(full["messages"][0]))


async def test_notes_in_the_lean_profile_say_they_are_not_the_users_words(tmp_path: Path) -> None:
    lean = await first_request(tmp_path, "lean")
    notes = [m["content"] for m in lean["messages"] if m["role"] == "user" and m["content"] != "hello"]
    assert notes and all(n.startswith("[Note from goat, not from the user.") for n in notes)
    assert "<system-reminder>" not in json.dumps(lean["messages"])


def test_every_lean_tool_keeps_its_required_fields() -> None:
    from goat_jupyter.agent.session import Session
    from goat_jupyter.tools import default_registry

    registry = default_registry(session=Session(workspace=Path.cwd()))
    for tool in registry.tools():
        if tool.name in LEAN_TOOLS:
            required = set(tool.parameters_schema().get("required", []))
            assert required <= set(LEAN_TOOLS[tool.name].keep), tool.name


@pytest.mark.parametrize(
    ("settings", "window", "expected"),
    [
        ({"api_base": "http://127.0.0.1:8089/v1"}, 128_000, "lean"),
        ({"model": "ollama/qwen2.5-coder:1.5b"}, 128_000, "lean"),
        ({"api_base": "https://llm.example.com/v1"}, 128_000, "full"),
        ({}, 128_000, "full"),
        ({}, 32_768, "lean"),
        ({}, 32_769, "full"),
        ({"api_base": "http://127.0.0.1:8089/v1", "tool_profile": "full"}, 8_000, "full"),
        ({"api_base": "https://llm.example.com/v1", "tool_profile": "lean"}, 200_000, "lean"),
    ],
)
def test_auto_chooses_lean_for_local_endpoints_and_small_windows(
    settings: dict[str, Any], window: int, expected: str
) -> None:
    config = Settings.model_validate(settings)
    assert profile_for(config, llm_client_for(config).local, window) == expected
