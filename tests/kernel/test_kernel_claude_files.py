"""Claude Code's files in a real kernel: rules enforced, instructions in the prompt the model gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env, trust_workspace

pytestmark = pytest.mark.timeout(240)


def tool_results(server: ReplayServer) -> list[str]:
    return [str(m.get("content")) for m in server.requests[-1]["messages"] if m["role"] == "tool"]


async def test_claude_settings_rules_and_local_instructions_reach_the_kernel_agent(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "repo"
    (ws / ".git").mkdir(parents=True)
    prepare_workspace(ws)
    (ws / "secret.txt").write_text("TOP-SECRET-VALUE\n")
    (ws / ".claude").mkdir()
    claude = {"permissions": {"deny": ["Read(./secret.txt)"], "allow": ["Bash(echo claude-allowed)"]}}
    (ws / ".claude/settings.json").write_text(json.dumps(claude))
    (ws / "CLAUDE.local.md").write_text("Always answer in haiku (local rule).\n")
    (home / ".claude").mkdir(parents=True)
    (home / ".claude/CLAUDE.md").write_text("User-wide rule from home.\n")
    script = [
        tool_turn("Read", {"file_path": "secret.txt"}),
        tool_turn("Grep", {"pattern": "TOP-SECRET", "path": "."}),
        tool_turn("Bash", {"command": "echo claude-allowed"}),
        tool_turn("Bash", {"command": "echo not-allowed"}),
        text_turn("done"),
    ]
    env = {**replay_kernel_env(home / ".goat", "", mode="dontAsk"), "HOME": str(home)}
    trust_workspace(ws, home / ".goat")  # the project's allow rule applies in a trusted folder
    with ReplayServer(script) as server:
        env["OPENAI_API_BASE"] = server.url
        async with KernelSession(ws, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            cell = await kernel.execute("%%goat\nread the secret")
            assert cell.status == "ok", cell.error
            status = await kernel.execute("%goat status")
    read, grep, allowed, refused = tool_results(server)
    assert "Read(./secret.txt)" in read and "TOP-SECRET-VALUE" not in read
    assert "TOP-SECRET-VALUE" not in grep and grep.startswith("No matches"), grep
    assert "claude-allowed" in allowed and "denied" not in allowed.lower()
    assert "not-allowed" not in refused.replace("echo not-allowed", "") and "dontAsk" in refused
    first = server.requests[0]["messages"]
    preamble = first[1]["content"]  # the instructions follow the prefix that caches across workspaces
    assert "Always answer in haiku (local rule)." in preamble and "User-wide rule from home." in preamble
    assert "Always answer in haiku" not in first[0]["content"]
    for path in (ws / ".claude/settings.json", ws / "CLAUDE.local.md", home / ".claude/CLAUDE.md"):
        assert str(path) in status.stdout
