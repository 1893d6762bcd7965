"""Acceptance: MCP servers from .mcp.json in a real kernel, with the replay server as the model."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import assert_history_valid, text_turn, tool_turn
from tests.kernel_harness import (
    KernelSession,
    prepare_workspace,
    replay_kernel_env,
    trust_workspace,
    wait_for,
)

pytestmark = pytest.mark.timeout(240)

TOKYO = {"timezone": "Asia/Tokyo"}
SCRIPT = [
    tool_turn("mcp__time__get_current_time", TOKYO, match="time in Tokyo"),
    text_turn("It is evening in Tokyo.", match="time in Tokyo"),
    tool_turn("mcp__time__get_current_time", TOKYO, match="ask again"),  # the server was killed
    tool_turn("mcp__time__get_current_time", TOKYO, match="ask again"),  # reconnects
    text_turn("Got it on the second try.", match="ask again"),
]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
async def mcp_kernel(tmp_path: Path) -> AsyncIterator[tuple[KernelSession, ReplayServer]]:
    prepare_workspace(tmp_path)
    time_server = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": time_server}}))
    trust_workspace(tmp_path, tmp_path / "home")  # a project's servers start only in a trusted folder
    with ReplayServer(SCRIPT) as server:
        env = replay_kernel_env(tmp_path / "home", server.url)
        # The default first-turn wait is 5 s; a loaded CI machine can need longer to start Python.
        env["GOAT_MCP_STARTUP_WAIT_MS"] = "60000"
        async with KernelSession(tmp_path, env) as kernel:
            loaded = await kernel.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.messages
            yield kernel, server


def time_server_pids(kernel_pid: int) -> list[int]:
    children = psutil.Process(kernel_pid).children(recursive=True)
    return [p.pid for p in children if "mcp_server_time" in " ".join(p.cmdline())]


async def test_first_request_lists_mcp_tools_and_calls_reach_the_real_server(
    mcp_kernel: tuple[KernelSession, ReplayServer],
) -> None:
    kernel, server = mcp_kernel
    kernel_pid = int((await kernel.execute("import os; print(os.getpid())")).stdout)
    await wait_for(lambda: bool(time_server_pids(kernel_pid)), 60)  # started by %load_ext alone

    first = await kernel.execute("%%goat\nWhat is the time in Tokyo?")
    assert first.status == "ok", first.error
    assert "mcp__time__get_current_time" in tool_names(server.requests[0])
    answer = json.loads(tool_results(server.requests[1])[-1])
    assert answer["timezone"] == "Asia/Tokyo" and "datetime" in answer

    status = await kernel.execute("%goat mcp")
    assert "time" in status.stdout and "connected" in status.stdout
    assert "mcp__time__get_current_time" in status.stdout

    pids = time_server_pids(kernel_pid)
    assert len(pids) == 1
    server_process = psutil.Process(pids[0])
    server_process.kill()
    with contextlib.suppress(psutil.NoSuchProcess):  # the kernel may reap it first
        server_process.wait(10)

    second = await kernel.execute("%%goat\nPlease ask again")
    assert second.status == "ok", second.error
    killed, reconnected = tool_results(server.requests[-1])[-2:]
    assert killed.startswith("Error: ") and "time" in killed
    assert json.loads(reconnected)["timezone"] == "Asia/Tokyo"
    assert "Got it on the second try." in second.text("text/plain") + second.text("text/markdown")
    assert time_server_pids(kernel_pid) not in ([], pids)  # a new server process
    assert_history_valid([m for m in server.requests[-1]["messages"] if m["role"] != "system"])
