"""What a new user meets in the first hour, in a real kernel against the replay server (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
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
