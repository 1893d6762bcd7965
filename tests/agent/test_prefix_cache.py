"""Cache-friendly across sessions (issue 23): nothing that varies by workspace, date or session comes
before the end of the tool definitions, so a server's prompt cache serves a session in another folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import make_agent, text_turn


def prefix(request: dict[str, Any]) -> str:
    """The request up to the end of the tool definitions, as chat templates render it: the system
    message, then the tools (Anthropic puts the tools first; both orders are covered by this)."""
    system = request["messages"][0]
    assert system["role"] == "system"
    return json.dumps(system, ensure_ascii=False) + json.dumps(request["tools"], ensure_ascii=False)


async def first_request(workspace: Path, profile: str, notebook: str | None = None) -> dict[str, Any]:
    with ReplayServer([text_turn("hi")]) as server:
        rig = make_agent(workspace, server.url)
        rig.session.settings.tool_profile = profile  # type: ignore[assignment]
        rig.session.settings.action_style = "tools"
        if notebook is not None:
            rig.session.notebook_path = workspace / notebook
        await rig.agent.run("hello")
        return server.requests[0]


@pytest.mark.parametrize("profile", ["full", "lean"])
async def test_two_sessions_in_different_folders_share_the_prefix(tmp_path: Path, profile: str) -> None:
    one, two = tmp_path / "alpha-project", tmp_path / "beta" / "nested folder"
    two.mkdir(parents=True)
    one.mkdir()
    (two / "CLAUDE.md").write_text("Always answer in French.\n")
    first = await first_request(one, profile)
    second = await first_request(two, profile, notebook="analysis.ipynb")
    assert prefix(first).encode() == prefix(second).encode()
    for request, folder in ((first, one), (second, two)):
        assert str(folder) not in prefix(request) and str(tmp_path) not in prefix(request)
        assert str(folder) in json.dumps(request["messages"][1:], ensure_ascii=False)
    later = json.dumps(second["messages"][1:], ensure_ascii=False)
    assert "Always answer in French." in later and "analysis.ipynb" in later
    assert "Always answer in French." not in prefix(second)


async def test_the_date_and_working_directory_come_after_the_prefix(tmp_path: Path) -> None:
    request = await first_request(tmp_path, "full")
    assert "Today's date" not in prefix(request) and "Working directory" not in prefix(request)
    assert "Today's date" in json.dumps(request["messages"][1:])
