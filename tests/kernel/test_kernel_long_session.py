"""Issue 11 in a real kernel against the replay server: compaction, recovery, stalls, Retry-After,
resuming a damaged session file, and MCP tools on the first turn."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.agent.compaction import COMPACTION_MARKER, SUMMARY_OPEN
from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import assert_history_valid, text_turn
from tests.kernel_harness import REPO_ROOT, KernelSession, replay_kernel_env, trust_workspace

pytestmark = pytest.mark.timeout(300)
WINDOW = 32_768
Start = Callable[..., Any]


def write_settings(workspace: Path, **settings: Any) -> None:
    (workspace / ".goat").mkdir(parents=True, exist_ok=True)
    (workspace / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01, **settings}))


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Start]:
    """start(turns, **settings) -> (kernel, server) with goat loaded; everything stops at the end."""
    opened: list[Any] = []

    async def launch(turns: list[dict[str, Any]], env: dict[str, str] | None = None, **settings: Any) -> Any:
        write_settings(tmp_path, **settings)
        trust_workspace(tmp_path, tmp_path / "home")  # the test's own project files (e.g. .mcp.json)
        server = ReplayServer(turns)
        server.start()
        kernel = KernelSession(tmp_path, {**replay_kernel_env(tmp_path / "home", server.url), **(env or {})})
        opened.append((kernel, server))
        await kernel.__aenter__()
        loaded = await kernel.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.messages
        return kernel, server

    yield launch
    for kernel, server in opened:
        await kernel.__aexit__()
        server.stop()


def conversation(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages after the prefix: not the system prompt, not the workspace's facts (the preamble)."""
    return [
        m
        for m in request["messages"]
        if m["role"] != "system" and "Workspace root:" not in str(m.get("content"))
    ]


def chatter(count: int, words: int = 1_000) -> list[dict[str, Any]]:
    body = " ".join(f"observation{j}" for j in range(words))  # litellm rejects one chunk repeated
    return [text_turn(f"Answer {i}: {body}", match=f"question {i}?") for i in range(count)]


def summary_turn(
    text: str = "## Goal\nAnalyse the sales data.\n## Current state\nQuestions answered.",
) -> dict[str, Any]:
    return text_turn(text, match=COMPACTION_MARKER)


async def test_a_run_that_crosses_the_window_compacts_and_continues_and_the_commands_work(
    start: Start,
) -> None:
    turns = [
        summary_turn(),
        summary_turn(),
        summary_turn("## Goal\nManual summary, numbers kept."),
        *chatter(9, words=1_600),
    ]
    kernel, server = await start(turns, context_window=WINDOW)
    outputs = []
    for i in range(9):
        cell = await kernel.execute(f"%%goat\nquestion {i}?")
        assert cell.status == "ok", cell.error
        outputs.append(cell.text())
    requests = list(server.requests)
    marks = [i for i, r in enumerate(requests) if COMPACTION_MARKER in json.dumps(r["messages"])]
    from goat_jupyter.agent.context import request_tokens

    sizes = [request_tokens(r["messages"], r.get("tools", [])) for r in requests]
    assert marks, f"the window was crossed, so the conversation was compacted {sizes} {outputs[-1][-3000:]}"
    after = conversation(requests[marks[0] + 1])
    assert (
        str(after[0]["content"]).startswith(SUMMARY_OPEN) and "Analyse the sales data." in after[0]["content"]
    )
    assert any("question" in str(m.get("content")) for m in after[1:]), "recent turns stay verbatim"
    assert_history_valid(after)
    assert any("context compacted:" in text and "→" in text for text in outputs)

    context = await kernel.execute("%goat context")
    assert context.status == "ok", context.error
    assert "Tool definitions" in context.text() and f"of {WINDOW:,} tokens" in context.text()
    assert "goat-context" in context.text("text/html")

    compacted = await kernel.execute("%goat compact keep the numbers")
    assert compacted.status == "ok", compacted.error
    assert "context compacted:" in compacted.text()
    manual = server.requests[len(requests) :]
    assert any("Focus especially on: keep the numbers" in json.dumps(r["messages"]) for r in manual)
    status = await kernel.execute("%goat status")
    assert f"compactions {len(marks) + 1}" in status.stdout


async def test_a_context_length_error_is_recovered(start: Start) -> None:
    too_long = {"error": {"status": 400, "message": "This model's maximum context length is 8192 tokens."}}
    turns = [
        text_turn("First answer.", match="first question"),
        {**too_long, "match": "second question"},
        summary_turn(),
        text_turn("Second answer after compaction.", match="second question"),
    ]
    kernel, server = await start(turns)
    assert (await kernel.execute("%%goat\nfirst question")).status == "ok"
    second = await kernel.execute("%%goat\nsecond question")
    assert second.status == "ok", second.error
    assert "Second answer after compaction." in second.text() and "context compacted:" in second.text()
    assert not server.remaining


async def test_a_stalled_stream_is_retried_within_the_idle_timeout(start: Start) -> None:
    stalled = {
        "text": "Let me think about this one carefully",
        "stall_after": 3,
        "stall_s": 120,
        "match": "stall",
    }
    turns = [
        text_turn("Warm.", match="warm up"),
        stalled,
        text_turn("Let me think about this one carefully. Recovered after the stall.", match="stall"),
    ]
    kernel, server = await start(turns, idle_timeout_s=2, first_token_timeout_s=10)
    assert (await kernel.execute("%%goat\nwarm up")).status == "ok"  # litellm's first-call imports
    cell = await kernel.execute("%%goat\nstall now", timeout=90)
    assert cell.status == "ok", cell.error
    assert "Recovered after the stall." in cell.text()
    assert "No response from the model for 1 s" in cell.text()
    # The words streamed before the stall are taken back: the retry's answer shows once.
    assert cell.text("text/markdown").count("Let me") == 1, cell.text("text/markdown")
    gap = server.request_times[2] - server.stall_times[0]
    assert gap <= 2 + 1.5, f"the retry came {gap:.1f} s after the stream went quiet (idle timeout 2 s)"


async def test_a_429_with_retry_after_waits_at_least_that_long(start: Start) -> None:
    limited = {"error": {"status": 429, "message": "Rate limited", "retry_after": 3}}
    kernel, server = await start([limited, text_turn("Answer after waiting.")])
    cell = await kernel.execute("%%goat\nhello", timeout=90)
    assert cell.status == "ok", cell.error
    assert "Answer after waiting." in cell.text() and "the provider asked for 3 s" in cell.text()
    assert server.request_times[1] - server.request_times[0] >= 3.0


async def test_a_session_file_cut_inside_a_multibyte_character_resumes(start: Start, tmp_path: Path) -> None:
    folder = tmp_path / ".goat" / "sessions"
    folder.mkdir(parents=True)
    lines = [
        {"type": "message", "message": {"role": "user", "content": "Lies die Größentabelle"}},
        {"type": "message", "message": {"role": "assistant", "content": "Die Größe ist 42 €."}},
        {"type": "message", "message": {"role": "user", "content": "Und die Überschrift?"}},
    ]
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    cut = data.rindex("Überschrift".encode()) + 1  # inside the two bytes of "Ü"
    (folder / "cutsession01.jsonl").write_bytes(data[:cut])
    kernel, server = await start([text_turn("Continuing where we were.")])
    resumed = await kernel.execute("%goat resume cutsession01")
    assert resumed.status == "ok", resumed.error
    assert "with 2 messages" in resumed.stdout and "dropped 1 damaged line" in resumed.stdout
    cell = await kernel.execute("%%goat\nweiter")
    assert cell.status == "ok", cell.error
    sent = [m.get("content") for m in conversation(server.requests[0])]
    assert sent[:2] == ["Lies die Größentabelle", "Die Größe ist 42 €."] and "weiter" in sent


async def test_an_mcp_server_that_needs_8_s_to_start_is_in_the_first_request(
    start: Start, tmp_path: Path
) -> None:
    slow = {
        "command": sys.executable,
        "args": [str(REPO_ROOT / "tests" / "mcp" / "demo_server.py"), "--slow-start", "8"],
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"slow": slow}}))
    kernel, server = await start([text_turn("I can see the slow server's tools.")])
    cell = await kernel.execute("%%goat\nwhich tools do you have?", timeout=120)
    assert cell.status == "ok", cell.error
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0]["tools"]}
    assert "mcp__slow__echo" in tools and "ListMcpResources" in tools["ToolSearch"]["description"]
    assert "Waiting up to 30 s for MCP servers to start: slow" in cell.text()


async def test_goat_resume_lists_past_conversations_by_when_size_and_first_request(
    start: Start, tmp_path: Path
) -> None:
    folder = tmp_path / ".goat" / "sessions"
    folder.mkdir(parents=True)
    note = "<system-reminder>\nToday's todo list is empty.\n</system-reminder>\n"
    older = [
        {
            "type": "message",
            "message": {"role": "user", "content": note + "Plot the monthly revenue\nby region"},
        },
        {"type": "message", "message": {"role": "assistant", "content": "Done."}},
        "a torn line",
    ]
    newer = [
        {"type": "run_start", "time": 1},
        {"type": "message", "message": {"role": "user", "content": "x" * 200}},
    ]
    for name, lines, mtime in [
        ("olderconvo01", older, 1_700_000_000),
        ("newerconvo02", newer, 1_800_000_000),
    ]:
        path = folder / f"{name}.jsonl"
        path.write_text(
            "".join((json.dumps(line) if isinstance(line, dict) else line) + "\n" for line in lines)
        )
        os.utime(path, (mtime, mtime))
    kernel, _server = await start([text_turn("unused")])
    listed = await kernel.execute("%goat resume")
    assert listed.status == "ok", listed.error
    lines = listed.stdout.splitlines()
    assert lines[0] == "Saved conversations in this folder, newest first (2 of 2):"
    assert lines[1].split()[:2] == ["newerconvo02", time.strftime("%Y-%m-%d", time.localtime(1_800_000_000))]
    assert "  1 message  'xxxx" in lines[1] and lines[1].endswith("…'"), lines[1]
    assert "olderconvo01" in lines[2] and "  2 messages  'Plot the monthly revenue'" in lines[2], lines[2]
    assert "system-reminder" not in listed.stdout and "%goat resume latest" in lines[3]
    resumed = await kernel.execute("%goat resume older")
    assert "Resumed session olderconvo01 with 2 messages" in resumed.stdout
    again = await kernel.execute("%goat resume")
    assert next(line for line in again.stdout.splitlines() if "olderconvo01" in line).endswith("(current)")


async def test_goat_resume_with_nothing_saved_says_so(start: Start) -> None:
    kernel, _server = await start([text_turn("unused")])
    listed = await kernel.execute("%goat resume")
    assert listed.stdout.startswith("No saved conversations in this folder yet")
