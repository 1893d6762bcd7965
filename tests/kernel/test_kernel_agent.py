"""%%goat in a real kernel (jupyter_client as the frontend) against the replay server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import assert_history_valid, text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)


# Each test's script; a turn with `match` answers only the prompt that contains it.
SCRIPTS = {
    "tools": [
        tool_turn("Write", {"file_path": "hello.txt", "content": "hi from goat\n"}),
        tool_turn("Read", {"file_path": "hello.txt"}),
        text_turn("I wrote **hello.txt** and read it back."),
        text_turn("Yes, hello.txt holds one line.", match="still there"),
    ],
    "interrupt": [
        tool_turn(
            "Bash",
            {"command": "echo partial-line-from-bash; echo $$ > pid.txt; exec sleep 60"},
            match="sleep for a minute",
        ),
        text_turn("Ready again.", match="are you ok"),
    ],
    "commands": [],
    "errors": [
        {"error": {"status": 429, "message": "slow down"}},
        {"error": {"status": 500, "message": "boom"}},
        tool_turn("Read", '{"file_path": "broken', call_id="bad_json"),
        tool_turn("Teleport", {"to": "moon"}, call_id="unknown_tool"),
        text_turn("Still here after the errors."),
    ],
}


@pytest.fixture
async def replay_kernel(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[KernelSession, ReplayServer]]:
    turns = SCRIPTS[request.param]
    prepare_workspace(tmp_path)
    with ReplayServer(turns) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            loaded = await kernel.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.messages
            yield kernel, server


@pytest.mark.parametrize("replay_kernel", ["tools"], indirect=True)
async def test_goat_cell_uses_tools_streams_text_and_continues(
    replay_kernel: tuple[KernelSession, ReplayServer], tmp_path: Path
) -> None:
    kernel, server = replay_kernel
    first = await kernel.execute("%%goat\nWrite hello.txt and read it back")
    assert first.status == "ok", first.error
    assert (tmp_path / "hello.txt").read_text() == "hi from goat\n"
    shown = first.text("text/plain") + first.text("text/markdown")
    assert "I wrote **hello.txt** and read it back." in shown
    # Sent right after %load_ext, while the model library (seconds to import) is still loading in the background:
    # the live status line says so, from the cell's first output on, and is gone from the saved output.
    outputs = first.of_type("display_data", "update_display_data")
    published = [str(m["content"]["data"].get("text/plain", "")) for m in outputs]
    assert any("Starting the model client" in text for text in published)
    assert "Stop to interrupt" in published[0], "the first thing the cell shows is the live line"
    assert "Starting the model client" not in shown and "Stop to interrupt" not in shown
    updates = first.of_type("update_display_data")
    assert updates, "the answer should stream as display updates"

    second = await kernel.execute("%%goat\nIs it still there?")
    assert second.status == "ok", second.error
    second_shown = second.text("text/plain") + second.text("text/markdown")
    assert "Yes, hello.txt holds one line." in second_shown
    assert "Starting the model client" not in second_shown
    history = server.requests[-1]["messages"]
    assert any(m.get("content") == "I wrote **hello.txt** and read it back." for m in history)
    assert_history_valid([m for m in history if m["role"] != "system"])


@pytest.mark.parametrize("replay_kernel", ["interrupt"], indirect=True)
async def test_interrupt_during_bash_ends_cell_quickly_and_next_cell_works(
    replay_kernel: tuple[KernelSession, ReplayServer], tmp_path: Path
) -> None:
    kernel, server = replay_kernel
    server_turns_before = len(server.remaining)
    seen: list[str] = []

    def watch(msg: dict[str, Any]) -> None:
        seen.append(str(msg["content"].get("data", {}).get("text/plain", "")))

    cell = asyncio.ensure_future(kernel.execute("%%goat\nPlease sleep for a minute", on_message=watch))
    pid_file = tmp_path / "pid.txt"
    for _ in range(3000):  # the first model call pays litellm's lazy imports: slow on a busy machine
        shown = any("partial-line-from-bash" in text for text in seen)
        if shown and pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    interrupted_at = time.perf_counter()
    await kernel.interrupt()
    result = await cell
    took = time.perf_counter() - interrupted_at
    print(f"interrupt to cell end: {took * 1000:.0f} ms")
    # The target is < 1 s (benchmarks/bench_interrupt.py measures it); this bound only guards
    # against a hang on a loaded CI machine.
    assert took < 5
    assert "Interrupted" in result.text("text/plain") + result.text("text/markdown") + result.text(
        "text/html"
    )
    # One line, no traceback (no goat internals, no CancelledError); still an error so Run All halts.
    assert result.status == "error" and result.error is not None
    assert result.error["content"]["traceback"] == ["\x1b[33m⊘ Interrupted by the user after 1 turn.\x1b[0m"]
    assert "CancelledError" not in str(result.messages)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert len(server.remaining) < server_turns_before

    after = await kernel.execute("%%goat\nare you ok?")
    assert after.status == "ok", after.error
    assert "Ready again." in after.text("text/plain") + after.text("text/markdown")
    history = server.requests[-1]["messages"]
    assert_history_valid([m for m in history if m["role"] != "system"])
    bash_result = next(m["content"] for m in history if m["role"] == "tool")
    assert "interrupted by the user" in bash_result
    assert "partial-line-from-bash" in bash_result


@pytest.mark.parametrize("replay_kernel", ["commands"], indirect=True)
async def test_goat_line_commands(replay_kernel: tuple[KernelSession, ReplayServer]) -> None:
    kernel, _ = replay_kernel
    status = await kernel.execute("%goat status")
    assert "openai/replay" in status.stdout and "turns 0" in status.stdout
    config = await kernel.execute("%goat config max_turns=7")
    assert "max_turns = 7" in config.stdout
    bad = await kernel.execute("%goat config permission_mode=wild")
    assert "Valid values" in bad.stdout
    local = await kernel.execute("%goat config api_base=http://127.0.0.1:8089/v1 tool_profile=lean")
    assert "api_base = 'http://127.0.0.1:8089/v1'" in local.stdout and "tool_profile = 'lean'" in local.stdout
    back = await kernel.execute("%goat config api_base=none tool_profile=auto")
    assert "api_base = None" in back.stdout
    magics = await kernel.execute("%lsmagic")
    assert "goat" in magics.text("text/plain")
    options = await kernel.execute("%%goat --max-turns zero\nhi")
    assert "--max-turns" in options.stdout


@pytest.mark.parametrize("replay_kernel", ["errors"], indirect=True)
async def test_provider_errors_and_bad_tool_calls_do_not_end_the_run(
    replay_kernel: tuple[KernelSession, ReplayServer],
) -> None:
    kernel, server = replay_kernel
    cell = await kernel.execute("%%goat\nplease cope with errors")
    assert cell.status == "ok", cell.error
    shown = cell.text("text/plain") + cell.text("text/markdown")
    assert "Still here after the errors." in shown
    assert "429" in shown and "500" in shown, "retries are announced in the cell"
    tool_results = {
        m["tool_call_id"]: m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"
    }
    assert tool_results["bad_json"].startswith("Error: ")
    assert tool_results["unknown_tool"].startswith("Error: ") and "Teleport" in tool_results["unknown_tool"]
