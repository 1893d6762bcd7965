"""Key redaction at the executor and the event sink, tried the ways a key could slip through: a
subagent's Bash `env` and its echo, a plugin tool returning the key in every field of its output, a
call interrupted after printing it, model text cut in the middle of a key, two agents streaming at
once, a key in the arguments the model sends. A key in the kernel's environment stands for all."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import Field

from goat_jupyter.replay import ReplayServer
from goat_jupyter.state import SessionState
from goat_jupyter.tools import Tool, ToolContext, ToolInput, ToolOutput, default_registry
from goat_jupyter.tools.events import (
    Event,
    Notice,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.tools.redaction import CleanSink
from goat_jupyter.tools.runner import Executor, ToolCall
from tests.subagents.test_subagents import agent_call, make_rig, parent_turn, requests_with

KEY = "sk-test-Qw3rTy7UiOp1AsDf5GhJk9Lz"
MARK = "[redacted: OPENAI_API_KEY]"


@pytest.fixture(autouse=True)
def key_in_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat-home"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    yield


class LeakInput(ToolInput):
    note: str = Field(default="", description="anything")


class LeakTool(Tool[LeakInput]):
    """A plugin that puts the key in every field a ToolOutput has."""

    name = "Leak"
    input_model = LeakInput
    side_effect = "read_only"

    def __init__(self) -> None:
        super().__init__()
        self._description = "Returns configuration."

    async def run(self, args: LeakInput, ctx: ToolContext) -> ToolOutput | str:
        ctx.progress(title=f"reading {KEY}", output=f"partial {KEY[:12]}")
        ctx.progress(output=f"{KEY[12:]} done\n")
        return ToolOutput(
            f"key={KEY}",
            title=f"Leak {KEY}",
            summary=KEY,
            display=f"shown {KEY}",
            metadata={"diff": f"+OPENAI_API_KEY={KEY}", "nested": [{KEY: KEY}]},
        )


def everything(events: list[Event]) -> str:
    return repr(events)


async def test_a_subagents_env_and_its_echo_reach_no_model_and_no_event(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-ENV: print the environment")),
        parent_turn(text="The child reported."),
        {"match": "CHILD-ENV", "tool_calls": [{"name": "Bash", "arguments": {"command": "env"}}]},
        {"match": "CHILD-ENV", "text": f"The key is {KEY}, as printed."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        result = await rig.agent.run("PARENT-PROMPT: delegate")
    assert result.stop_reason == "end_turn" and not server.remaining
    child = requests_with(server, "CHILD-ENV")
    assert MARK in str(child[-1]["messages"])  # the child's model got `env` redacted
    assert KEY not in repr(server.requests)  # nor did the parent get the child's echo
    assert KEY not in everything(rig.events) and MARK in everything(rig.events)
    assert KEY not in repr(rig.session.messages)


async def test_every_field_of_a_tool_output_is_redacted(tmp_path: Path) -> None:
    session = SessionState(workspace=tmp_path)
    registry = default_registry(session=session)
    registry.register(LeakTool())
    events: list[Event] = []
    executor = Executor(registry, session, emit=events.append)
    [output] = await executor.run_calls([ToolCall("c1", "Leak", {"note": KEY})])
    assert KEY not in repr(output) and output.content == f"key={MARK}"
    assert output.metadata == {"diff": f"+OPENAI_API_KEY={MARK}", "nested": [{MARK: MARK}]}
    assert KEY not in everything(events) and KEY[:12] not in everything(events)
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert started.args == {"note": MARK}  # what the user sees of the model's arguments
    shown = "".join(e.output or "" for e in events if isinstance(e, ToolProgress))
    assert shown == f"partial {MARK} done\n"


async def test_an_interrupted_calls_partial_output_is_redacted(tmp_path: Path) -> None:
    session = SessionState(workspace=tmp_path)
    events: list[Event] = []
    executor = Executor(default_registry(session=session), session, emit=events.append)
    command = 'echo "token: $OPENAI_API_KEY"; sleep 30'
    task = asyncio.ensure_future(executor.run_one(ToolCall("c1", "Bash", {"command": command})))
    for _ in range(200):
        if any(isinstance(e, ToolProgress) and e.output for e in events):
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    settled = executor.settled["c1"].content
    assert "interrupted" in settled and f"token: {MARK}" in settled and KEY not in settled


def test_model_text_cut_inside_a_key_never_shows_a_piece_of_it() -> None:
    seen: list[Event] = []
    sink = CleanSink(seen.append)
    for piece in ["Your key: sk-te", "st-Qw3rTy7U", "iOp1AsDf5GhJk9Lz.", " Bye"]:
        sink(TextDelta(piece))
    sink(TurnUsage(1, 10, 5, None))
    texts = [e.text for e in seen if isinstance(e, TextDelta)]
    assert "".join(texts) == f"Your key: {MARK}. Bye"
    assert not any("sk-te" in t or "Qw3r" in t for t in texts)
    assert isinstance(seen[-1], TurnUsage)  # the held text came out before what followed it


def test_two_agents_streaming_at_once_each_keep_their_own_held_text() -> None:
    seen: list[Event] = []
    sink = CleanSink(seen.append)
    sink(TextDelta("A says sk-test-Qw3r", "a"))
    sink(TextDelta("B says sk-test-", "b"))
    sink(TextDelta("Ty7UiOp1AsDf5GhJk9Lz", "a"))
    sink(Notice(f"b noticed {KEY}", "info", "b"))  # ends b's text; a's stays held
    sink(RunFinished(1, 1, 1, None, 0.1, "end_turn"))  # ends everything
    by_agent = {
        agent: "".join(e.text for e in seen if isinstance(e, TextDelta) and e.agent_id == agent)
        for agent in ("a", "b")
    }
    assert by_agent == {"a": f"A says {MARK}", "b": "B says sk-test-"}
    notice = next(e for e in seen if isinstance(e, Notice))
    assert notice.text == f"b noticed {MARK}"
    assert isinstance(seen[-1], RunFinished)


def test_finished_events_pass_through_after_the_progress_rest() -> None:
    seen: list[Event] = []
    sink = CleanSink(seen.append)
    sink(ToolProgress("c1", None, "value sk-test-Qw3r"))
    output = ToolOutput(f"done {MARK}")
    sink(ToolFinished("c1", "Bash", output, 0.1))
    assert [type(e).__name__ for e in seen] == ["ToolProgress", "ToolProgress", "ToolFinished"]
    assert "".join(e.output or "" for e in seen if isinstance(e, ToolProgress)) == "value sk-test-Qw3r"
