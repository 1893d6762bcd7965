"""Tools that need a runtime the host plugs in (`ToolContext.services`): without it each one ends
with an error naming what is missing, whatever other runtimes are attached, and nothing runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.mcp_client import McpManager
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, default_registry
from goat_jupyter.tools.agents.send_message import SendMessageTool
from goat_jupyter.tools.agents.team_create import TeamCreateTool
from goat_jupyter.tools.agents.team_delete import TeamDeleteTool
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor
from goat_jupyter.web import WebService

QUESTION = {
    "question": "Which database?",
    "header": "DB",
    "options": [
        {"label": "Postgres", "description": "relational"},
        {"label": "SQLite", "description": "a file"},
    ],
}
# tool -> (the runtime it needs, valid arguments)
NEEDS: dict[str, tuple[str, dict[str, Any]]] = {
    "AskUserQuestion": ("ui", {"questions": [QUESTION]}),
    "ExitPlanMode": ("ui", {"plan": "1. read\n2. write"}),
    "WebFetch": ("web", {"url": "https://example.com"}),
    "WebSearch": ("web", {"query": "goat"}),
    "KernelInspect": ("kernel", {"expression": "df"}),
    "RunCell": ("kernel", {"cell_id": "abc"}),
    "Agent": ("subagents", {"description": "look", "prompt": "look around"}),
    "TeamCreate": ("teams", {"team_name": "t", "members": [{"name": "a", "prompt": "p"}]}),
    "SendMessage": ("teams", {"to": "a", "message": "hi"}),
    "TeamDelete": ("teams", {"team_name": "t"}),
    "ListMcpResources": ("mcp", {}),
    "ReadMcpResource": ("mcp", {"server": "db", "uri": "db://x"}),
}


def run(tmp_path: Path, services: Services, name: str, args: dict[str, Any]) -> Any:
    session = SessionState(workspace=tmp_path)
    if name == "ExitPlanMode":
        session.settings.permission_mode = "plan"  # it refuses to run outside plan mode
    registry = default_registry(session=session)
    for tool in (TeamCreateTool(), SendMessageTool(), TeamDeleteTool()):
        registry.register(tool)
    executor = Executor(registry, session, services=services)
    return asyncio.run(executor.run_one(ToolCall("c1", name, args)))


def others_than(runtime: str, tmp_path: Path) -> Services:
    """Every runtime this test can build cheaply, except `runtime`."""
    services = Services()
    if runtime != "web":
        services.web = WebService()
    if runtime != "mcp":
        services.mcp = McpManager(tmp_path, {})
    return services


@pytest.mark.parametrize("name", sorted(NEEDS))
@pytest.mark.parametrize("attached", ["nothing", "the other runtimes"])
def test_a_missing_runtime_is_a_clear_error(tmp_path: Path, name: str, attached: str) -> None:
    runtime, args = NEEDS[name]
    services = Services() if attached == "nothing" else others_than(runtime, tmp_path)
    out = run(tmp_path, services, name, args)
    assert out.is_error and out.error_code == "EXECUTION_ERROR", out.content
    assert f"{name} is not available in this context: no {runtime} runtime" in out.content
    assert "Traceback" not in out.content
    assert list(tmp_path.iterdir()) == []  # nothing ran: no file, no session data
