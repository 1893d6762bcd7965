"""Subagents (the Agent tool): a parent and its children talk to one replay server over real HTTP.

Parent turns match a marker only the parent's prompt contains; child turns match text only the
child's request contains (its prompt or its system prompt), so each finds its own scripted turn.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from goat_jupyter.subagents import attach_subagents
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.events import (
    Event,
    RunFinished,
    SubagentStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from goat_jupyter.tools.runner import Executor, PermissionPolicy
from tests.agent_helpers import assert_history_valid
from tests.process_helpers import wait_all_gone

PARENT = "PARENT-PROMPT"
SUBAGENT_NEVER = {"Agent", "AskUserQuestion", "ExitPlanMode", "TaskOutput", "TaskStop"}
# No MCP server is configured here, so the MCP resource tools are not offered (issue 11); WebFetch,
# WebSearch, LS and TodoRead wait behind ToolSearch (issue 34).
READ_ONLY_TOOLS = ["Read", "Glob", "Grep", "TodoWrite", "ToolSearch"]


@dataclass
class Rig:
    """A parent agent whose executor carries the subagents (and teams) services."""

    session: Session
    agent: Agent
    services: Services
    events: list[Event] = field(default_factory=lambda: list[Event]())

    def of_type(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def tool_results(self) -> list[str]:
        return [m["content"] for m in self.session.messages if m["role"] == "tool"]


def make_rig(
    workspace: Path,
    url: str,
    *,
    settings: Settings | None = None,
    policy: PermissionPolicy | None = None,
    extra_tools: tuple[Any, ...] = (),
) -> Rig:
    settings = settings or Settings(model="openai/replay")
    session = Session(workspace=workspace, settings=settings, persist=False)

    def llm_for(chosen: Settings) -> LLMClient:
        retry = RetryPolicy(max_retries=0, base_delay_s=0.01)
        return LLMClient(chosen.model, retry=retry, extra={"api_base": url, "api_key": "test-key"})

    registry = default_registry(session=session)
    for tool in extra_tools:
        registry.register(tool)
    services = attach_subagents(Services(), llm_for)
    events: list[Event] = []
    executor = Executor(registry, session, policy=policy, emit=events.append, services=services)
    agent = Agent(session, registry, executor, llm_for(settings), events.append)
    return Rig(session, agent, services, events)


def agent_call(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"name": "Agent", "arguments": {"description": "a task", "prompt": prompt, **extra}}


def parent_turn(*calls: dict[str, Any], text: str = "") -> dict[str, Any]:
    turn: dict[str, Any] = {"match": PARENT, "text": text}
    if calls:
        turn["tool_calls"] = list(calls)
    return turn


def requests_with(server: ReplayServer, marker: str) -> list[dict[str, Any]]:
    """Requests whose first user message contains `marker` (a child's own requests)."""
    found: list[dict[str, Any]] = []
    for request in server.requests:
        # The session's preamble (workspace facts, after the cached prefix) is not the prompt.
        users = [
            m
            for m in request["messages"]
            if m["role"] == "user" and "Workspace root:" not in str(m["content"])
        ]
        if users and marker in str(users[0]["content"]):
            found.append(request)
    return found


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_explore_subagent_searches_and_only_its_final_text_returns(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nneedle here\n")
    turns = [
        parent_turn(agent_call("CHILD-EXPLORE: where is the needle?", subagent_type="Explore")),
        parent_turn(text="The needle is in notes.txt."),
        {
            "match": "CHILD-EXPLORE",
            "tool_calls": [{"name": "Grep", "arguments": {"pattern": "needle", "path": str(tmp_path)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10},
        },
        {
            "match": "CHILD-EXPLORE",
            "text": "Found it: notes.txt line 2.",
            "usage": {"prompt_tokens": 150, "completion_tokens": 20},
        },
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        result = await rig.agent.run(f"{PARENT}: find the needle")
        child = requests_with(server, "CHILD-EXPLORE")
    assert result.text == "The needle is in notes.txt."
    assert tool_names(child[0]) == READ_ONLY_TOOLS
    assert "read-only explorer" in child[0]["messages"][0]["content"]
    assert PARENT not in str(child[0]["messages"]), "the child must not see the parent's conversation"
    # The child's Grep really ran: its result is in the child's second request.
    assert "notes.txt" in child[1]["messages"][-1]["content"]
    agent_result = rig.tool_results()[0]
    assert agent_result.startswith("Found it: notes.txt line 2.")
    assert "agent_id: explore-1" in agent_result
    assert "total_tokens: 280" in agent_result and "tool_uses: 1" in agent_result
    finished = next(e for e in rig.of_type(ToolFinished) if e.name == "Agent")
    meta = finished.output.metadata
    assert (meta["agent_id"], meta["prompt_tokens"], meta["completion_tokens"]) == ("explore-1", 250, 30)
    assert meta["tool_calls"] == 1 and meta["duration_ms"] >= 0
    # Only the final text reached the parent's history; the child's Grep result did not.
    assert [m["role"] for m in rig.session.messages] == ["user", "assistant", "tool", "assistant"]
    assert_history_valid(rig.session.messages)


async def test_child_events_carry_its_agent_id_and_render_nested(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-EVENTS: list the folder", subagent_type="Explore")),
        parent_turn(text="done"),
        {"match": "CHILD-EVENTS", "tool_calls": [{"name": "LS", "arguments": {"path": str(tmp_path)}}]},
        {"match": "CHILD-EVENTS", "text": "The folder is empty."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
    child_tools = [e for e in rig.of_type(ToolStarted) if e.agent_id is not None]
    assert [(e.name, e.agent_id) for e in child_tools] == [("LS", "explore-1")]
    child_text = "".join(e.text for e in rig.of_type(TextDelta) if e.agent_id == "explore-1")
    assert child_text == "The folder is empty."
    parent_tools = [e.name for e in rig.of_type(ToolStarted) if e.agent_id is None]
    assert parent_tools == ["Agent"]
    # The child's own RunFinished is not forwarded: only the parent's footer appears.
    assert len(rig.of_type(RunFinished)) == 1


async def test_general_purpose_gets_all_tools_but_agent_and_writes_real_files(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    turns = [
        parent_turn(agent_call("CHILD-GP: write out.txt")),
        parent_turn(agent_call("CHILD-PLAN: plan it", subagent_type="Plan")),
        parent_turn(text="done"),
        {
            "match": "CHILD-GP",
            "tool_calls": [{"name": "Write", "arguments": {"file_path": str(target), "content": "hi\n"}}],
        },
        {"match": "CHILD-GP", "text": "Wrote out.txt."},
        {"match": "CHILD-PLAN", "text": "Plan: 1. nothing."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
        parent_tools = tool_names(server.requests[0])
        general = tool_names(requests_with(server, "CHILD-GP")[0])
        plan = requests_with(server, "CHILD-PLAN")[0]
    assert target.read_text() == "hi\n"
    assert general == [name for name in parent_tools if name not in SUBAGENT_NEVER]
    assert {"Bash", "Write", "Edit"} <= set(general)
    assert tool_names(plan) == READ_ONLY_TOOLS
    assert "read-only planner" in plan["messages"][0]["content"]
    assert rig.tool_results()[1].startswith("Plan: 1. nothing.")


async def test_unknown_type_and_unknown_resume_are_errors(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("x", subagent_type="Wizard"), agent_call("y", resume="explore-9")),
        parent_turn(text="ok"),
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
        request_count = len(server.requests)
    unknown_type, unknown_resume = rig.tool_results()
    assert unknown_type.startswith("Error: ") and "Wizard" in unknown_type
    assert all(name in unknown_type for name in ("general-purpose", "Explore", "Plan"))
    assert unknown_resume.startswith("Error: ") and "explore-9" in unknown_resume
    assert request_count == 2, "no subagent should have been started"


async def test_model_aliases_map_through_settings(tmp_path: Path) -> None:
    settings = Settings(model="openai/replay", model_aliases={"haiku": "openai/replay-small"})
    turns = [
        parent_turn(
            agent_call("CHILD-HAIKU", model="haiku"),
            agent_call("CHILD-SONNET", model="sonnet"),
            agent_call("CHILD-NAMED", model="openai/replay-custom"),
        ),
        parent_turn(text="ok"),
        {"match": "CHILD-HAIKU", "text": "h"},
        {"match": "CHILD-SONNET", "text": "s"},
        {"match": "CHILD-NAMED", "text": "n"},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url, settings=settings)
        await rig.agent.run(f"{PARENT}: go")
        models = {
            m: requests_with(server, m)[0]["model"] for m in ("CHILD-HAIKU", "CHILD-SONNET", "CHILD-NAMED")
        }
    assert models == {"CHILD-HAIKU": "replay-small", "CHILD-SONNET": "replay", "CHILD-NAMED": "replay-custom"}


async def test_background_subagent_notice_reaches_the_parents_next_turn(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-BG: count files", subagent_type="Explore", run_in_background=True)),
        parent_turn(text="Started it."),
        parent_turn({"name": "TaskOutput", "arguments": {"task_id": "agent_1"}}),
        parent_turn(text="The subagent says three."),
        {"match": "CHILD-BG", "text": "There are three files."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        first = await rig.agent.run(f"{PARENT}: start it")
        started = rig.tool_results()[0]
        task = await rig.session.tasks.wait("agent_1", 10)
        await rig.agent.run(f"{PARENT}: what did it find?")
        reminder = server.requests[-2]["messages"][-1]["content"]
    assert first.text == "Started it."
    assert "agent_1" in started and "explore-1" in started
    assert task.status == "completed" and task.output.startswith("There are three files.")
    assert (
        "<system-reminder>" in reminder and "Background task agent_1" in reminder and "completed" in reminder
    )
    assert "There are three files." in rig.tool_results()[1]


async def test_resume_continues_with_the_childs_history(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-R1: remember the number 42")),
        parent_turn(text="Noted."),
        parent_turn(agent_call("CHILD-R2: which number was it?", resume="general-purpose-1")),
        parent_turn(text="It was 42."),
        {"match": "CHILD-R1", "text": "I will remember 42."},
        {"match": "CHILD-R2", "text": "The number was 42."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: first")
        await rig.agent.run(f"{PARENT}: second")
        second = requests_with(server, "CHILD-R1")[1]
    contents = [m.get("content") for m in second["messages"]]
    assert "Workspace root:" in str(contents[1]), "the preamble (the folder's facts) follows the prefix"
    assert contents[2:] == [
        "CHILD-R1: remember the number 42",
        "I will remember 42.",
        "CHILD-R2: which number was it?",
    ]
    resumed = rig.tool_results()[1]
    assert resumed.startswith("The number was 42.") and "agent_id: general-purpose-1" in resumed


async def test_max_turns_stops_the_subagent(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-MAX: look", subagent_type="Explore", max_turns=1)),
        parent_turn(text="ok"),
        {
            "match": "CHILD-MAX",
            "text": "Looking.",
            "tool_calls": [{"name": "LS", "arguments": {"path": "."}}],
        },
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
    result = rig.tool_results()[0]
    assert result.startswith("Looking.") and "limit of 1 turns" in result


class RecordingApprover:
    """Allows starting subagents, denies everything else, and keeps what it was asked."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        if request.tool_name == "Agent":
            return ApprovalAnswer("allow_once")
        return ApprovalAnswer("deny", feedback="not now")


async def test_subagent_permission_prompts_go_through_the_parents_policy(tmp_path: Path) -> None:
    approver = RecordingApprover()
    turns = [
        parent_turn(agent_call("CHILD-PERM: run a command")),
        parent_turn(text="ok"),
        {"match": "CHILD-PERM", "tool_calls": [{"name": "Bash", "arguments": {"command": "touch made.txt"}}]},
        {"match": "CHILD-PERM", "text": "The user said no."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url, policy=RulePolicy(approver))
        await rig.agent.run(f"{PARENT}: go")
        denied = requests_with(server, "CHILD-PERM")[1]["messages"][-1]["content"]
    assert [r.tool_name for r in approver.requests] == ["Agent", "Bash"]
    assert denied.startswith("Error: ") and "not now" in denied
    assert not (tmp_path / "made.txt").exists()


async def test_resume_refuses_a_running_subagent_and_a_looser_mode(tmp_path: Path) -> None:
    turns = [
        parent_turn(
            agent_call("CHILD-SLOW: wait", run_in_background=True),
            agent_call("again", resume="general-purpose-1"),
            agent_call("CHILD-LOOSE", mode="bypassPermissions"),
        ),
        parent_turn(text="ok"),
        {"match": "CHILD-SLOW", "text": "done", "delay_s": 0.3},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
        await rig.session.tasks.wait("agent_1", 10)
    _, running, loose = rig.tool_results()
    assert running.startswith("Error: ") and "still running" in running
    assert loose.startswith("Error: ") and "bypassPermissions" in loose


async def test_a_subagent_leaves_the_parents_background_notices_to_the_parent(tmp_path: Path) -> None:
    turns = [
        parent_turn({"name": "Bash", "arguments": {"command": "echo parent-bg", "run_in_background": True}}),
        parent_turn(agent_call("CHILD-N: look around", subagent_type="Explore")),
        parent_turn(text="first run done"),
        parent_turn(text="second run done"),
        {
            "match": "CHILD-N",
            "tool_calls": [{"name": "LS", "arguments": {"path": str(tmp_path)}}],
            "delay_s": 0.2,
        },
        {"match": "CHILD-N", "text": "Nothing here."},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        await rig.agent.run(f"{PARENT}: go")
        await rig.session.tasks.wait("bash_1", 10)
        await rig.agent.run(f"{PARENT}: again")
        child = [str(r["messages"]) for r in requests_with(server, "CHILD-N")]
        parent = [str(r["messages"]) for r in requests_with(server, PARENT)]
    assert child and not any("Background task bash_1" in text for text in child)
    assert "Background task bash_1" in parent[-1]


def rendezvous(mine: str, theirs: str) -> str:
    """Bash that marks `mine` and then waits (at most 30 s) for `theirs`: both finish only if run together."""
    return f"touch {mine}; for i in $(seq 600); do [ -f {theirs} ] && echo met && exit 0; sleep 0.05; done; exit 1"


async def test_agent_calls_in_one_message_run_at_the_same_time(tmp_path: Path) -> None:
    turns = [
        parent_turn(agent_call("CHILD-LEFT: meet right"), agent_call("CHILD-RIGHT: meet left")),
        parent_turn(text="Both met."),
        {
            "match": "CHILD-LEFT",
            "tool_calls": [{"name": "Bash", "arguments": {"command": rendezvous("l", "r")}}],
        },
        {
            "match": "CHILD-RIGHT",
            "tool_calls": [{"name": "Bash", "arguments": {"command": rendezvous("r", "l")}}],
        },
        {"match": "CHILD-LEFT", "text": "left met right"},
        {"match": "CHILD-RIGHT", "text": "right met left"},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        result = await rig.agent.run(f"{PARENT}: meet")
    assert result.text == "Both met."
    reports = rig.tool_results()
    # Results keep the model's order although the subagents ran side by side.
    assert reports[0].startswith("left met right") and reports[1].startswith("right met left")
    child_bash = [e for e in rig.of_type(ToolFinished) if e.name == "Bash"]
    assert [e.output.content.strip() for e in child_bash] == ["met", "met"]
    started = [e for e in rig.events if isinstance(e, SubagentStarted)]
    agent_calls = [e.call_id for e in rig.of_type(ToolStarted) if e.name == "Agent"]
    assert sorted(e.parent_call_id for e in started) == sorted(agent_calls)
    assert_history_valid(rig.session.messages)


async def test_interrupting_parallel_subagents_kills_both_and_keeps_history_valid(tmp_path: Path) -> None:
    left, right = tmp_path / "left.pid", tmp_path / "right.pid"
    turns = [
        parent_turn(agent_call("CHILD-SLEEP-L: sleep"), agent_call("CHILD-SLEEP-R: sleep")),
        parent_turn(text="Ready again."),
        {
            "match": "CHILD-SLEEP-L",
            "tool_calls": [{"name": "Bash", "arguments": {"command": f"echo $$ > {left}; exec sleep 60"}}],
        },
        {
            "match": "CHILD-SLEEP-R",
            "tool_calls": [{"name": "Bash", "arguments": {"command": f"echo $$ > {right}; exec sleep 60"}}],
        },
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(tmp_path, server.url)
        run = asyncio.ensure_future(rig.agent.run(f"{PARENT}: sleep twice"))
        for _ in range(500):
            if all(p.exists() and p.read_text().strip() for p in (left, right)):
                break
            await asyncio.sleep(0.02)
        pids = [int(p.read_text()) for p in (left, right)]
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert await wait_all_gone(pids)
        assert_history_valid(rig.session.messages)
        again = await rig.agent.run(f"{PARENT}: are you there")
    assert again.text == "Ready again."
    assert_history_valid(rig.session.messages)


async def test_a_subagents_spend_counts_against_the_parents_run_budget(tmp_path: Path) -> None:
    big = {"prompt_tokens": 9_000, "completion_tokens": 10}
    turns = [
        {**parent_turn(agent_call("CHILD-SPEND: look", subagent_type="Explore")), "usage": big},
        parent_turn(text="never sent"),
        {"match": "CHILD-SPEND", "tool_calls": [{"name": "LS", "arguments": {"path": "."}}], "usage": big},
        {"match": "CHILD-SPEND", "text": "found it", "usage": big},
    ]
    with ReplayServer(turns) as server:
        rig = make_rig(
            tmp_path, server.url, settings=Settings(model="openai/replay", max_tokens_per_run=26_000)
        )
        result = await rig.agent.run(f"{PARENT}: go")
        child_requests = len(requests_with(server, "CHILD-SPEND"))
        parent_requests = len(server.requests) - child_requests
    # 9k (parent) + 2 x 9k (child) = 27k: the parent's own next request would fit on its own
    # spend (9k + ~6k), so stopping it shows that the child's tokens counted.
    assert result.stop_reason == "budget"
    assert child_requests == 2 and parent_requests == 1
    assert rig.tool_results()[0].startswith("found it")


async def test_a_subagents_prefix_names_no_folder_so_it_caches_across_sessions(tmp_path: Path) -> None:
    """Issue 23: a subagent's system prompt and tools are byte-identical in two folders; the folder,
    the date and the project's instructions come after them."""
    prefixes: list[str] = []
    for folder in (tmp_path / "alpha", tmp_path / "beta" / "other place"):
        folder.mkdir(parents=True)
        (folder / "AGENTS.md").write_text(f"Instructions of {folder.name}.\n")
        turns = [
            parent_turn(agent_call("CHILD-CACHE: look around", subagent_type="Explore")),
            parent_turn(text="Looked."),
            {"match": "CHILD-CACHE", "text": "Nothing to see."},
        ]
        with ReplayServer(turns) as server:
            rig = make_rig(folder, server.url)
            await rig.agent.run(f"{PARENT}: delegate")
            [child] = requests_with(server, "CHILD-CACHE")
        system = child["messages"][0]
        prefix = json.dumps(system, ensure_ascii=False) + json.dumps(child["tools"], ensure_ascii=False)
        assert str(folder) not in prefix and "Today's date" not in prefix
        later = json.dumps(child["messages"][1:], ensure_ascii=False)
        assert str(folder) in later and f"Instructions of {folder.name}." in later
        prefixes.append(prefix)
    assert prefixes[0].encode() == prefixes[1].encode()
