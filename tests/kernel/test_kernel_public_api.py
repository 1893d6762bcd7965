"""The public API from notebook cells in a real kernel: a custom tool, a hook and an approver."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)

SETUP = '''
import goat_jupyter
from pydantic import BaseModel

class Lookup(BaseModel):
    city: str

calls, seen, asked = [], [], []

@goat_jupyter.tool
def weather(args: Lookup) -> str:
    """Today's weather in a city."""
    calls.append(args.city)
    return f"Sunny in {args.city}"

@goat_jupyter.hook("PreToolUse", matcher="weather")
def log(event):
    seen.append(event["tool_input"]["city"])

@goat_jupyter.approver
def approve(request):
    asked.append(request.tool_name)
    return request.tool_name == "weather"
'''


def offered(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_a_tool_registered_from_a_cell_is_offered_runs_and_survives_a_reset(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    script = [
        tool_turn("weather", {"city": "Oslo"}),
        tool_turn("Bash", {"command": "echo hi"}),
        text_turn("It is sunny."),
        text_turn("still here", match="again"),
    ]
    with ReplayServer(script) as server:
        env = {**replay_kernel_env(tmp_path / "goat", server.url, mode="default"), "HOME": str(tmp_path)}
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            setup = await kernel.execute(SETUP)
            assert setup.status == "ok", setup.error
            cell = await kernel.execute("%%goat\nweather in Oslo?")
            assert cell.status == "ok", cell.error
            state = await kernel.execute("print(calls, seen, asked)")
            assert state.stdout.strip() == "['Oslo'] ['Oslo'] ['weather', 'Bash']"
            await kernel.execute("%goat reset")
            again = await kernel.execute("%%goat\nagain")
            assert again.status == "ok", again.error
    assert "weather" in offered(server.requests[0]) and "weather" in offered(server.requests[-1])
    description = next(t for t in server.requests[0]["tools"] if t["function"]["name"] == "weather")
    assert description["function"]["description"] == "Today's weather in a city."
    results = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "Sunny in Oslo" in results[0]
    assert "denied" in results[1] and "hi\n" not in results[1]
