"""A model sending lone UTF-16 surrogates (in its text, Bash and TodoWrite arguments, a tool name) to
goat in a real kernel: the cell renders, the run ends normally, the next cell continues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)
TODOS = {"todos": [{"content": "check \udfff", "status": "in_progress", "activeForm": "checking \ud800"}]}
TURNS = [
    {
        "text": "Looking \ud800 now",
        "tool_calls": [{"name": "Bash", "arguments": {"command": "echo a\udcffb"}}],
    },
    {"tool_calls": [{"name": "TodoWrite", "arguments": TODOS}]},
    {"tool_calls": [{"name": "Ba\udc00sh", "arguments": {"command": "ls"}}]},
    {"text": "Finished \udfff."},
    {"text": "Still here."},
]


async def test_lone_surrogates_from_the_model_do_not_end_the_run(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    with ReplayServer(TURNS) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            first = await kernel.execute("%%goat\ngo")
            second = await kernel.execute("%%goat\nare you there?")
    for cell in (first, second):
        assert cell.status == "ok" and cell.error is None, cell.messages
        assert "Traceback" not in cell.stdout and "UnicodeEncodeError" not in json.dumps(
            [m["content"] for m in cell.messages]
        )
    shown = first.text("text/html") + first.text()
    assert "Looking \ufffd now" in shown and "a\ufffdb" in shown and "Finished \ufffd." in shown
    assert "Still here." in second.text("text/html") + second.text()
    assert not server.remaining
    for path in (tmp_path / ".goat" / "sessions").glob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            json.loads(line.decode("utf-8"))
