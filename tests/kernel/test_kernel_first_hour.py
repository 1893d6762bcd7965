"""What a new user meets in the first hour, in a real kernel against the replay server (issue 22)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env, wait_for

pytestmark = pytest.mark.timeout(240)


async def test_a_missing_key_is_one_sentence_at_once_and_the_next_cell_works(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    with ReplayServer([text_turn("Hello with a key.")]) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            await kernel.execute("%load_ext goat_jupyter\nimport os\nos.environ.pop('OPENAI_API_KEY', None)")
            first = await kernel.execute("%%goat\nhello")
            shown = first.text("text/plain")
            assert "No API key for openai/replay: set OPENAI_API_KEY" in shown
            assert "goat settings" in shown
            assert "retrying" not in shown and "HTTP 500" not in shown and "overloaded" not in shown
            assert len(server.remaining) == 1, "no request was sent without a key"
            await kernel.execute("os.environ['OPENAI_API_KEY'] = 'test-key'")
            second = await kernel.execute("%%goat\nhello again")
            assert "Hello with a key." in second.text("text/plain") + second.text("text/markdown")


STOP_REPEATS = 12
STOP_DELAYS_S = (0.0, 0.0, 0.01, 0.03, 0.1)  # after the line shows


def _shown(msg: dict[str, Any]) -> str:
    data = msg["content"].get("data") or {}
    return "".join(str(value) for value in data.values()) + str(msg["content"].get("text", ""))


async def _stop_after(kernel: KernelSession, delay_s: float) -> None:
    if delay_s:
        await asyncio.sleep(delay_s)
    await kernel.interrupt()


async def test_stop_right_after_output_keeps_that_output_for_the_model(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    turns = [
        # The command's text (the card's title) does not hold the marker; only its output does.
        tool_turn("Bash", {"command": f"printf 'PARTIAL-%s\\n' OUT-{i}; sleep 60"}, match=f"run number {i}")
        for i in range(STOP_REPEATS)
    ]
    with ReplayServer(turns) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            await kernel.execute("%load_ext goat_jupyter\nimport json\nfrom goat_jupyter.kernel import magic")
            for i in range(STOP_REPEATS):
                marker = f"PARTIAL-OUT-{i}"
                stopping: list[asyncio.Future[None]] = []

                delay = STOP_DELAYS_S[i % len(STOP_DELAYS_S)]

                def watch(
                    msg: dict[str, Any],
                    marker: str = marker,
                    stopping: list[Any] = stopping,
                    delay: float = delay,
                ) -> None:
                    if not stopping and marker in _shown(msg):  # Stop as the line shows, or just after
                        stopping.append(asyncio.ensure_future(_stop_after(kernel, delay)))

                result = await kernel.execute(f"%%goat\nrun number {i}", on_message=watch)
                assert stopping, f"the line never showed: {result.text('text/plain')}"
                await stopping[0]
                check = await kernel.execute(
                    "print(json.dumps([m for m in magic.runtime().session.messages if m['role'] == 'tool'][-1]))"
                )
                tool_result = json.loads(check.stdout)["content"]
                assert "interrupted by the user" in tool_result
                assert marker in tool_result, f"run {i}: the model lost what the cell showed: {tool_result!r}"


async def _mcp_status_until(kernel: KernelSession, wanted: str, tries: int = 300) -> str:
    status = ""
    for _ in range(tries):
        status = (await kernel.execute("%goat mcp")).stdout
        if wanted in status:
            return status
        await asyncio.sleep(0.1)
    return status


async def test_panel_settings_take_effect_on_reload_or_say_what_overrides_them(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    home = tmp_path / "home"
    env = replay_kernel_env(home, "http://127.0.0.1:9/v1")  # sets GOAT_MODEL=openai/replay
    (home / "settings.json").write_text(json.dumps({"model": "gpt-4o"}))  # what the panel saved
    async with KernelSession(tmp_path, env) as kernel:
        await kernel.execute("%load_ext goat_jupyter")
        status = (await kernel.execute("%goat status")).stdout
        assert "model = 'openai/replay' comes from the environment variable GOAT_MODEL" in status
        assert "the settings panel's 'gpt-4o' is not used" in status
        assert "not used" in (await kernel.execute("%goat config")).stdout
        changed = (await kernel.execute("%goat config model=openai/other\n%goat config")).stdout
        assert "GOAT_MODEL" not in changed, "a runtime change is not said to come from the environment"
        assert "No MCP servers are configured" in (await kernel.execute("%goat mcp")).stdout

        # The panel saves a server into ~/.goat/settings.json; reload starts it, %goat mcp shows it.
        time_server = {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        }
        (home / "settings.json").write_text(
            json.dumps({"model": "gpt-4o", "mcpServers": {"time": time_server}})
        )
        reloaded = (await kernel.execute("%goat config reload")).stdout
        assert "MCP servers: starting time." in reloaded and "GOAT_MODEL" in reloaded
        status = await _mcp_status_until(kernel, "mcp__time__get_current_time")
        assert "time" in status and "connected" in status and "mcp__time__get_current_time" in status

        # Unchanged on a second reload (the live connection is kept); removed when the panel removes it.
        assert "MCP servers: unchanged." in (await kernel.execute("%goat config reload")).stdout
        (home / "settings.json").write_text(json.dumps({"model": "gpt-4o"}))
        assert "MCP servers: stopped time." in (await kernel.execute("%goat config reload")).stdout
        gone = await kernel.execute(
            "from goat_jupyter.kernel import magic\nprint(magic.runtime().registry.names())"
        )
        assert "mcp__time__" not in (await _wait_gone(kernel, gone.stdout))


async def _wait_gone(kernel: KernelSession, names: str) -> str:
    for _ in range(100):
        if "mcp__time__" not in names:
            return names
        await asyncio.sleep(0.1)
        names = (await kernel.execute("print(magic.runtime().registry.names())")).stdout
    return names


async def test_compact_is_an_await_with_a_live_line_and_stop_works(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    turns = [
        text_turn("First answer.", match="first question"),
        text_turn("Second answer.", match="second question"),
        {**text_turn("## Goal\nslow summary"), "delay_s": 30},  # the small model takes its time
    ]
    with ReplayServer(turns) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            await kernel.execute("%load_ext goat_jupyter")
            await kernel.execute("%%goat\nfirst question")
            await kernel.execute("%%goat\nsecond question")
            seen: list[str] = []
            cell = asyncio.ensure_future(
                kernel.execute("%goat compact keep numbers", on_message=lambda m: seen.append(_shown(m)))
            )
            await wait_for(lambda: any("Compacting the conversation" in text for text in seen), 30)
            await wait_for(lambda: any("Stop to interrupt" in text for text in seen), 30)
            # The kernel is not blocked: the Stop button (an interrupt) ends the await at once.
            await kernel.interrupt()
            result = await cell
            assert result.status == "error"
            assert "context compacted" not in result.text()
            assert "Stop to interrupt" not in result.text(), "the live line is gone from the saved output"
            after = await kernel.execute(
                "from goat_jupyter.kernel import magic\nprint(len(magic.runtime().session.messages))"
            )
            assert int(after.stdout) == 4, "the conversation is unchanged after a stopped compaction"
