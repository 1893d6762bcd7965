"""End to end through the agent loop: two parallel subagents (Agent calls in one model message,
scripted over real HTTP by the replay server) Read and Edit the same file. Issue 16's first case:
both report success, so both changes must be in the file."""

from __future__ import annotations

from pathlib import Path

from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import ToolFinished
from tests.agent_helpers import assert_history_valid
from tests.subagents.test_subagents import PARENT, agent_call, make_rig, parent_turn


def child_turns(marker: str, path: Path, old: str, new: str) -> list[dict[str, object]]:
    return [
        {"match": marker, "tool_calls": [{"name": "Read", "arguments": {"file_path": str(path)}}]},
        {
            "match": marker,
            "tool_calls": [
                {"name": "Edit", "arguments": {"file_path": str(path), "old_string": old, "new_string": new}}
            ],
        },
        {"match": marker, "text": f"{marker} done"},
    ]


async def test_two_parallel_subagents_editing_one_file_keep_both_changes(tmp_path: Path) -> None:
    target = tmp_path / "settings.py"
    target.write_text("DEBUG = False\nWORKERS = 1\n")
    turns = [
        parent_turn(agent_call("CHILD-ONE: turn on debug"), agent_call("CHILD-TWO: more workers")),
        parent_turn(text="Both edited."),
        *child_turns("CHILD-ONE", target, "DEBUG = False", "DEBUG = True"),
        *child_turns("CHILD-TWO", target, "WORKERS = 1", "WORKERS = 8"),
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        result = await rig.agent.run(f"{PARENT}: edit settings")
    assert result.text == "Both edited."
    edits = [e for e in rig.of_type(ToolFinished) if e.name == "Edit"]
    assert [e.output.is_error for e in edits] == [False, False], [e.output.content for e in edits]
    assert target.read_text() == "DEBUG = True\nWORKERS = 8\n"
    assert_history_valid(rig.session.messages)
