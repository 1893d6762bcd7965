"""Long sessions in plain asyncio against the replay server over real HTTP (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.agent.compaction import COMPACTION_MARKER, SUMMARY_OPEN
from goat_jupyter.agent.context import request_tokens
from goat_jupyter.agent.session import Session, load_session
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import Notice
from tests.agent_helpers import AgentRig, assert_history_valid, make_agent, text_turn, tool_turn

pytestmark = pytest.mark.timeout(180)
WINDOW = 32_768


def data_file(workspace: Path, rows: int = 3_000) -> Path:
    path = workspace / "data.csv"
    lines = [
        f"{i},2024-{i % 12 + 1:02d}-{i % 28 + 1:02d},{(i * 7919) % 10007 / 13:.4f},region_{i % 17}"
        for i in range(rows)
    ]
    path.write_text("date_id,date,value,region\n" + "\n".join(lines) + "\n")
    return path


def long_rig(tmp_path: Path, url: str, **settings: Any) -> AgentRig:
    rig = make_agent(tmp_path, url, max_turns=60)
    rig.session.settings = rig.session.settings.model_copy(update={"context_window": WINDOW, **settings})
    return rig


def conversation(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages after the prefix: not the system prompt, not the workspace's facts (the preamble)."""
    return [
        m
        for m in request["messages"]
        if m["role"] != "system" and "Workspace root:" not in str(m.get("content"))
    ]


def test_session_requests_stay_under_the_window_and_keep_originals(tmp_path: Path) -> None:
    data = data_file(tmp_path)
    reads = [
        tool_turn("Read", {"file_path": str(data), "offset": 1 + 250 * i, "limit": 250}) for i in range(10)
    ]
    with ReplayServer([*reads, text_turn("Read it all.")], context_limit=int(WINDOW * 0.9)) as server:
        rig = long_rig(tmp_path, server.url)
        asyncio_run(rig.agent.run("read data.csv in pieces"))
        requests = list(server.requests)
    sizes = [request_tokens(r["messages"], r.get("tools", [])) for r in requests]
    assert max(sizes) <= WINDOW * 0.9, sizes
    pruned = [r for r in requests if "[Pruned to save context" in json.dumps(r["messages"])]
    assert pruned, "the old Read outputs were replaced by placeholders in the request"
    for request in requests:
        assert_history_valid(conversation(request))
    placeholder = next(m for m in conversation(pruned[-1]) if "[Pruned" in str(m.get("content")))
    assert "Read(" in placeholder["content"] and "Call the tool again" in placeholder["content"]
    # The session (and its file) keep every original output.
    outputs = [m["content"] for m in rig.session.messages if m["role"] == "tool"]
    assert len(outputs) == 10 and not any("[Pruned" in o for o in outputs)
    saved = load_session(rig.session.path, tmp_path)
    assert [m["content"] for m in saved.messages if m["role"] == "tool"] == outputs


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def chatter(count: int, words: int = 1_000) -> list[dict[str, Any]]:
    # Varied words: litellm rejects a stream that repeats one chunk many times.
    body = " ".join(f"observation{j}" for j in range(words))
    return [text_turn(f"Answer {i}: {body}", match=f"question {i}?") for i in range(count)]


def test_crossing_the_window_compacts_and_the_next_request_holds_the_summary(tmp_path: Path) -> None:
    summary = text_turn(
        "## Goal\nAnalyse sales.\n## Current state\nSeven questions answered.", match=COMPACTION_MARKER
    )
    with ReplayServer([summary, summary, *chatter(9)], context_limit=int(WINDOW * 0.9)) as server:
        rig = long_rig(tmp_path, server.url)
        for i in range(9):
            asyncio_run(rig.agent.run(f"question {i}?"))
        requests = list(server.requests)
    compaction = [i for i, r in enumerate(requests) if COMPACTION_MARKER in json.dumps(r["messages"])]
    assert 1 <= len(compaction) <= 2
    after = requests[compaction[0] + 1]
    texts = [str(m.get("content")) for m in conversation(after)]
    assert texts[0].startswith(SUMMARY_OPEN) and "Seven questions answered." in texts[0]
    assert any("question" in t for t in texts[1:]), "recent turns stay verbatim"
    assert "question 0?" not in json.dumps(after["messages"]), "the oldest turns were summarised"
    notices = [e.text for e in rig.of_type(Notice) if e.text.startswith("context compacted")]
    assert len(notices) == len(compaction) == rig.session.context.compactions and "→" in notices[0]
    sizes = [request_tokens(r["messages"], r.get("tools", [])) for r in requests]
    assert max(sizes) <= WINDOW * 0.9, sizes
    # Resuming the file rebuilds the compacted history, not the whole original.
    saved = load_session(rig.session.path, tmp_path)
    assert [m["content"] for m in saved.messages] == [m["content"] for m in rig.session.messages]


def test_a_context_length_error_compacts_once_and_retries(tmp_path: Path) -> None:
    too_long = {"error": {"status": 400, "message": "This model's maximum context length is 8192 tokens."}}
    turns = [
        text_turn("First answer.", match="first question"),
        {**too_long, "match": "second question"},
        text_turn("## Goal\nKeep going.", match=COMPACTION_MARKER),
        text_turn("Second answer after compaction.", match="second question"),
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        asyncio_run(rig.agent.run("first question"))
        result = asyncio_run(rig.agent.run("second question"))
        remaining = server.remaining
    assert result.text == "Second answer after compaction." and not remaining
    assert rig.session.context.compactions == 1
    assert str(rig.session.messages[0]["content"]).startswith(SUMMARY_OPEN)


def test_a_second_context_length_error_ends_the_run_with_the_error(tmp_path: Path) -> None:
    too_long = {"error": {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"}}
    turns = [
        text_turn("First.", match="first"),
        too_long,
        text_turn("## Goal\nx", match=COMPACTION_MARKER),
        too_long,
    ]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        asyncio_run(rig.agent.run("first"))
        with pytest.raises(Exception, match="context"):
            asyncio_run(rig.agent.run("second"))
    assert_history_valid(rig.session.messages)


def test_session_file_cut_inside_a_multibyte_character_resumes(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path)
    session.append({"role": "user", "content": "Schätze die Größe"})
    session.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}],
        }
    )
    session.append({"role": "tool", "tool_call_id": "c1", "content": "Größe: 42 € — ünïcödé"})
    session.release()
    data = session.path.read_bytes()
    cut = data.index("ünïcödé".encode()) + 1  # inside the two bytes of "ü"
    session.path.write_bytes(data[:cut] + b'\n[1, 2]\n"just a string"\n')
    resumed = load_session(session.path, tmp_path)
    assert [m["role"] for m in resumed.messages] == ["user", "assistant", "tool"]
    assert resumed.messages[2]["content"].startswith("Error: interrupted")
    assert (
        "dropped 3 damaged lines" in resumed.load_report
        and "added 1 missing tool result" in resumed.load_report
    )
    assert_history_valid(resumed.messages)


def test_two_kernels_never_write_the_same_session_file(tmp_path: Path) -> None:
    first = Session(workspace=tmp_path)
    first.append({"role": "user", "content": "one"})
    second = load_session(first.path, tmp_path)
    second.append({"role": "user", "content": "two"})
    assert second.session_id != first.session_id and "open in another kernel" in second.load_report
    first.append({"role": "user", "content": "three"})
    assert [json.loads(x)["message"]["content"] for x in first.path.read_text().splitlines()] == [
        "one",
        "three",
    ]
    copied = load_session(second.path, tmp_path)
    assert [m["content"] for m in copied.messages] == ["one", "two"]


def test_the_full_profile_sends_at_most_3650_cl100k_tokens_of_tool_definitions(tmp_path: Path) -> None:
    from goat_jupyter.agent.context import tools_tokens
    from goat_jupyter.tools import default_registry
    from goat_jupyter.tools.offer import make_offer

    # Nothing hidden (a kernel, MCP servers): the worst case; the rare tools wait behind ToolSearch.
    sent = make_offer(default_registry(cwd=tmp_path), set(), [], 2_000, tools_tokens).sent
    assert {t["function"]["name"] for t in sent} >= {"Read", "Bash", "Agent", "RunCell", "ToolSearch"}
    assert tools_tokens(sent) <= 3_650


def anthropic_rig(tmp_path: Path, server: ReplayServer) -> AgentRig:
    from goat_jupyter.agent.llm import LLMClient, RetryPolicy
    from goat_jupyter.agent.loop import Agent
    from goat_jupyter.tools import default_registry
    from goat_jupyter.tools.runner import Executor

    session = Session(workspace=tmp_path)
    events: list[Any] = []
    registry = default_registry(session=session)
    base = server.url.removesuffix("/v1")
    llm = LLMClient(
        "anthropic/claude-sonnet-4-5",
        retry=RetryPolicy(max_retries=0),
        extra={"api_base": base, "api_key": "k"},
    )
    agent = Agent(session, registry, Executor(registry, session, emit=events.append), llm, events.append)
    return AgentRig(session, agent, events)


def test_claude_requests_carry_cache_breakpoints_and_a_byte_stable_prefix(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    turns = [
        tool_turn("Read", {"file_path": str(tmp_path / "notes.txt")}),
        text_turn("It says alpha."),
        tool_turn("Bash", {"command": "cd /tmp && echo moved"}, match="second"),
        text_turn("Done.", match="second"),
    ]
    with ReplayServer(turns) as server:
        rig = anthropic_rig(tmp_path, server)
        asyncio_run(rig.agent.run("read notes.txt"))
        rig.session.settings.permission_mode = "acceptEdits"  # changes between runs go to the end
        asyncio_run(rig.agent.run("second run"))
        requests = list(server.requests)
    assert len(requests) == 4
    systems = {json.dumps(r["system"], sort_keys=True) for r in requests}
    tools = {json.dumps(r["tools"], sort_keys=True) for r in requests}
    assert len(systems) == 1 and len(tools) == 1, "system prompt and tools are byte-identical"
    assert requests[0]["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert requests[0]["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    for request in requests:
        marks = json.dumps(request["messages"]).count('"cache_control"')
        assert 1 <= marks <= 2, "the newest turns carry breakpoints (4 at most in all)"
    last = json.dumps(requests[-1]["messages"])
    assert "Permission mode: acceptEdits" in last and "Permission mode: default" in last
    assert rig.session.usage.cached_tokens > 0, "the server's cache imitation reported reads"
