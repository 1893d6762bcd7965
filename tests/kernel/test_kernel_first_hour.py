"""What a new user meets in the first hour, in a real kernel against the replay server (issue 22)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

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
