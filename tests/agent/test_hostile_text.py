"""Nothing a model sends ends the run: arbitrary text with lone UTF-16 surrogates as the model's text,
as Bash and TodoWrite arguments (raw and JSON-escaped), as tool names and call ids, through the replay
server over real HTTP. The run reaches its end, every request is answered, and the session file stays
valid UTF-8 JSON lines that resume without repair."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.agent.session import load_session
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import TextDelta, ToolStarted
from tests.agent_helpers import assert_history_valid, make_agent

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
ESCAPED_TODOS = '{"todos": [{"content": "\\ud83d", "status": "pending", "activeForm": "\\ude00"}]}'
HOSTILE = st.lists(st.one_of(st.characters(), SURROGATES), max_size=24).map("".join)


def turns(text: str, command: str, todo: str, tool_name: str, call_id: str) -> list[dict[str, Any]]:
    escaped = json.dumps({"command": "printf %s " + shlex.quote(command.replace("\0", ""))})
    todos = [{"content": todo or "x", "status": "pending", "activeForm": todo or "x"}]
    return [
        {
            "text": text,
            "tool_calls": [{"name": "Bash", "arguments": {"command": "printf %s " + shlex.quote(command)}}],
        },
        {"tool_calls": [{"name": "Bash", "arguments": escaped}]},  # the model's own \\udXXX escapes
        {"tool_calls": [{"name": "TodoWrite", "arguments": {"todos": todos}}]},
        {
            "tool_calls": [
                {"name": tool_name or "\ud800", "id": call_id or "\udfff", "arguments": {"x": text}}
            ]
        },
        {"tool_calls": [{"name": "TodoWrite", "arguments": ESCAPED_TODOS}]},  # halves of a pair, apart
        {"text": text + "\udc80 the end"},
    ]


def assert_session_file_valid(path: Path, workspace: Path) -> None:
    lines = path.read_bytes().splitlines()
    for line in lines:
        json.loads(line.decode("utf-8"))  # strict UTF-8: no surrogate was written as bytes
    resumed = load_session(path, workspace)
    assert resumed.load_report == ""  # nothing to drop or repair
    assert_history_valid(resumed.messages)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=HOSTILE, command=HOSTILE, todo=HOSTILE, tool_name=HOSTILE, call_id=HOSTILE)
async def test_hostile_text_anywhere_never_ends_the_run(
    tmp_path_factory: Any, text: str, command: str, todo: str, tool_name: str, call_id: str
) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    script = turns(text, command, todo, tool_name, call_id)
    with ReplayServer(script) as server:
        rig = make_agent(workspace, server.url, retries=0)
        result = await rig.agent.run("go \ud800 on")
    assert result.stop_reason == "end_turn"
    assert not server.remaining and len(server.requests) == len(script)
    assert_history_valid(rig.session.messages)
    assert_session_file_valid(rig.session.path, workspace)
    shown = [e.text for e in rig.of_type(TextDelta)] + [json.dumps(e.args) for e in rig.of_type(ToolStarted)]
    for piece in shown:
        piece.encode("utf-8")  # what the renderer gets encodes


async def test_a_lone_surrogate_in_each_place_is_replaced_not_fatal(tmp_path: Path) -> None:
    script = turns("hi \ud800", "a\udcffb", "todo \udfff", "Bash\ud800", "id\ud800")
    with ReplayServer(script) as server:
        rig = make_agent(tmp_path, server.url, retries=0)
        result = await rig.agent.run("go")
    assert result.stop_reason == "end_turn" and not server.remaining
    saved = rig.session.path.read_text(encoding="utf-8")
    assert "hi \ufffd" in saved and "a\ufffdb" in saved and "todo \ufffd" in saved
    tool_results = [m["content"] for m in rig.session.messages if m["role"] == "tool"]
    assert tool_results[0] == "a\ufffdb"  # Bash ran with the replacement character, not a crash
    assert "no tool named 'Bash\ufffd'" in tool_results[3]
    assert rig.session.todos and rig.session.todos[0].content == "\ufffd"
