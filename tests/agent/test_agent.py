"""The agent loop over litellm and real HTTP to the replay server, with real tools and files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psutil
import pytest

from goat_jupyter.agent.session import load_session
from goat_jupyter.errors import LLMError
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import Notice, RunFinished, TextDelta, ToolFinished, TurnUsage
from tests.agent_helpers import assert_history_valid, make_agent, text_turn, tool_turn


async def test_writes_and_reads_a_file_then_answers(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    turns = [
        tool_turn("Write", {"file_path": str(target), "content": "alpha\nbeta\n"}),
        tool_turn("Read", {"file_path": "notes.txt"}),
        text_turn("The file has two lines: alpha and beta."),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        result = await rig.agent.run("Write notes.txt and read it back")
        requests = server.requests
    assert target.read_text() == "alpha\nbeta\n"
    assert result.text == "The file has two lines: alpha and beta."
    assert result.turns == 3 and result.stop_reason == "end_turn"
    streamed = "".join(e.text for e in rig.of_type(TextDelta))
    assert streamed == result.text
    assert len(rig.of_type(TextDelta)) > 1, "text should arrive as several deltas"
    read_result = [m for m in rig.session.messages if m["role"] == "tool"][1]["content"]
    assert "1\talpha" in read_result and "2\tbeta" in read_result
    # The model saw the tool schemas and, on the last request, both tool results.
    assert {t["function"]["name"] for t in requests[0]["tools"]} >= {"Read", "Write", "Bash"}
    assert [m["role"] for m in requests[-1]["messages"]][-4:] == ["assistant", "tool", "assistant", "tool"]
    assert_history_valid(rig.session.messages)


async def test_conversation_continues_across_runs(tmp_path: Path) -> None:
    turns = [text_turn("Hello! I am goat."), text_turn("You said hi before.", match="what did I say")]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        await rig.agent.run("hi")
        await rig.agent.run("what did I say first?")
        second = server.requests[1]["messages"]
    contents = [m.get("content") for m in second]
    assert "hi" in contents and "Hello! I am goat." in contents
    assert [m["role"] for m in rig.session.messages] == ["user", "assistant", "user", "assistant"]


async def test_malformed_and_unknown_tool_calls_reach_the_model_as_errors(tmp_path: Path) -> None:
    turns = [
        tool_turn("Read", '{"file_path": "x.txt"', call_id="bad_json"),
        tool_turn("Teleport", {"where": "moon"}, call_id="unknown"),
        tool_turn("Read", {"path": "x.txt"}, call_id="bad_field"),
        text_turn("Recovered."),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        result = await rig.agent.run("go")
    results = {m["tool_call_id"]: m["content"] for m in rig.session.messages if m["role"] == "tool"}
    assert results["bad_json"].startswith("Error: ") and "JSON" in results["bad_json"]
    assert results["unknown"].startswith("Error: ") and "Teleport" in results["unknown"]
    assert results["bad_field"].startswith("Error: ") and "file_path" in results["bad_field"]
    assert result.text == "Recovered."
    codes = [e.output.error_code for e in rig.of_type(ToolFinished)]
    assert codes == ["INVALID_INPUT", "UNKNOWN_TOOL", "INVALID_INPUT"]


async def test_rate_limit_then_server_error_then_success(tmp_path: Path) -> None:
    turns = [
        {"error": {"status": 429, "message": "slow down"}},
        {"error": {"status": 500, "message": "boom"}},
        text_turn("Answered after retries."),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        result = await rig.agent.run("hello")
        attempts = len(server.requests)
    assert result.text == "Answered after retries."
    assert attempts == 3
    warnings = [n.text for n in rig.of_type(Notice)]
    assert len(warnings) == 2 and "429" in warnings[0] and "500" in warnings[1]


async def test_gives_up_after_retries_and_session_stays_usable(tmp_path: Path) -> None:
    turns = [{"error": {"status": 503, "message": "down"}}] * 2 + [text_turn("Back.")]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url, retries=1)
        with pytest.raises(LLMError):
            await rig.agent.run("first")
        result = await rig.agent.run("second")
    assert result.text == "Back."
    assert_history_valid(rig.session.messages)


async def test_cut_stream_is_retried(tmp_path: Path) -> None:
    turns = [{"text": "partial answ", "cut_stream": True}, text_turn("Full answer.")]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        result = await rig.agent.run("hello")
    assert result.text == "Full answer."
    assert rig.session.messages[-1]["content"] == "Full answer."


async def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    turns = [tool_turn("TodoRead", {}) for _ in range(5)]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url, max_turns=2)
        result = await rig.agent.run("loop forever")
    assert result.stop_reason == "max_turns" and result.turns == 2
    assert_history_valid(rig.session.messages)


async def test_usage_is_reported_per_turn_and_in_total(tmp_path: Path) -> None:
    turns = [
        tool_turn("TodoRead", {}, usage={"prompt_tokens": 100, "completion_tokens": 10}),
        text_turn("done", usage={"prompt_tokens": 120, "completion_tokens": 5}),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        result = await rig.agent.run("count")
    assert [(u.prompt_tokens, u.completion_tokens) for u in rig.of_type(TurnUsage)] == [(100, 10), (120, 5)]
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (220, 15)
    finished = rig.of_type(RunFinished)[-1]
    assert finished.turns == 2 and finished.stop_reason == "end_turn"


async def test_background_task_notice_reaches_the_next_turn(tmp_path: Path) -> None:
    turns = [
        tool_turn("Bash", {"command": "echo background-done", "run_in_background": True}),
        tool_turn("Bash", {"command": "sleep 0.5"}),
        text_turn("ok"),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        await rig.agent.run("start it")
        last_request = json.dumps(server.requests[-1]["messages"])
    assert "Background task" in last_request and "completed" in last_request


async def test_interrupt_mid_tool_kills_process_and_keeps_history_valid(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    turns = [
        tool_turn("Bash", {"command": f"echo $$ > {marker}; exec sleep 60"}),
        text_turn("after interrupt", match="next prompt"),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        run = asyncio.ensure_future(rig.agent.run("sleep please"))
        for _ in range(200):
            if marker.exists() and marker.read_text().strip():
                break
            await asyncio.sleep(0.02)
        pid = int(marker.read_text())
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert_history_valid(rig.session.messages)
        result = await rig.agent.run("next prompt")
    assert result.text == "after interrupt"
    assert_history_valid(rig.session.messages)
    saved = load_session(rig.session.path, tmp_path)
    assert_history_valid(saved.messages)
    assert any("interrupted" in str(m.get("content")) for m in saved.messages if m["role"] == "tool")
