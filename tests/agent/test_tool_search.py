"""The per-request tool tax (issue 34): the full profile's first request fits 4,200 cl100k tokens,
the rare tools and big MCP servers wait behind ToolSearch, and every tool stays reachable, through
the permission engine as before. Real parts: the replay server over HTTP, a real stdio MCP server."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.agent.context import request_tokens, tools_tokens
from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session, load_session
from goat_jupyter.kernel.services import KernelService
from goat_jupyter.mcp_client import McpManager, McpTimeouts
from goat_jupyter.permissions.policy import RulePolicy
from goat_jupyter.replay import ReplayServer
from goat_jupyter.subagents.types import subagent_type, tools_for
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.catalog import ToolCatalog
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.conversation.tool_search import search
from goat_jupyter.tools.events import Event
from goat_jupyter.tools.offer import loaded_names, make_offer, offered_tools
from goat_jupyter.tools.runner import Executor, ToolCall
from tests.agent_helpers import text_turn, tool_turn

pytestmark = pytest.mark.timeout(120)

DEMO = str(Path(__file__).parent.parent / "mcp" / "demo_server.py")
TIMEOUTS = McpTimeouts(connect_s=40, call_s=20, request_s=20, first_turn_wait_s=40)
FIRST_REQUEST_CAP = 4_200
# Each deferred built-in, and words from its purpose a model would search with.
KEYWORDS = {
    "Config": "change a setting",
    "Delete": "delete a file",
    "ExitPlanMode": "plan approval",
    "LS": "list folder",
    "Move": "rename a file",
    "RunCode": "sandbox",
    "TaskOutput": "background task output",
    "TaskStop": "stop background task",
    "TodoRead": "todo list",
    "WebFetch": "fetch url",
    "WebSearch": "search the web",
    "ListMcpResources": "mcp resources",
    "ReadMcpResource": "read resource uri",
    "TeamCreate": "create team",
    "SendMessage": "send message",
    "TeamDelete": "delete team",
}


class Rig:
    def __init__(self, workspace: Path, url: str, services: Services | None = None) -> None:
        self.session = Session(workspace=workspace)
        self.session.settings.tool_profile = "full"
        self.events: list[Event] = []
        self.registry = default_registry(session=self.session)
        self.executor = Executor(
            self.registry,
            self.session,
            policy=RulePolicy(None),  # the real permission engine, headless: "ask" is denied
            services=services or Services(kernel=KernelService(shell=None)),
            emit=self.events.append,
        )
        llm = LLMClient(
            "openai/replay", retry=RetryPolicy(max_retries=0), extra={"api_base": url, "api_key": "k"}
        )
        self.agent = Agent(self.session, self.registry, self.executor, llm, self.events.append)

    def results(self) -> dict[str, str]:
        """Tool name -> the content of its last result in the history."""
        names = {
            call["id"]: call["function"]["name"]
            for message in self.session.messages
            for call in message.get("tool_calls") or []
        }
        return {names[m["tool_call_id"]]: m["content"] for m in self.session.messages if m["role"] == "tool"}


def sent(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def searched(query: str) -> dict[str, Any]:
    return tool_turn("ToolSearch", {"query": query})


async def test_the_full_profiles_first_request_fits_4200_tokens_and_names_the_deferred_tools(
    tmp_path: Path,
) -> None:
    with ReplayServer([text_turn("hi")]) as server:
        await Rig(tmp_path, server.url).agent.run("hello")
        first = server.requests[0]
    assert request_tokens(first["messages"], first["tools"]) <= FIRST_REQUEST_CAP
    names = sent(first)
    assert {"Read", "Edit", "Bash", "NotebookEdit", "RunCell", "KernelInspect", "Agent", "ToolSearch"} <= set(
        names
    )
    assert not set(names) & set(KEYWORDS)
    listing = next(t for t in first["tools"] if t["function"]["name"] == "ToolSearch")["function"]
    for name in ("Config", "LS", "RunCode", "TaskOutput", "WebFetch", "ExitPlanMode"):
        assert name in listing["description"]


def every_tool_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolCatalog:
    monkeypatch.setenv("GOAT_EXPERIMENTAL_AGENT_TEAMS", "1")
    return default_registry(cwd=tmp_path)


def test_every_deferred_tool_is_found_by_its_name_and_by_a_keyword(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = every_tool_registry(tmp_path, monkeypatch)
    offer = make_offer(registry, set(), [], 2_000, tools_tokens)
    deferred = offer.deferred.names()
    assert deferred == set(KEYWORDS), "every deferred tool has a keyword test, and only those"
    tools = [t for t in offered_tools(registry, set()) if t["function"]["name"] != "ToolSearch"]
    for name, words in KEYWORDS.items():
        assert [t["function"]["name"] for t in search(f"select:{name}", tools, 5)] == [name]
        assert [t["function"]["name"] for t in search(name.lower(), tools, 5)] == [name]
        found = [t["function"]["name"] for t in search(words, tools, 5, registry.search_hints())]
        assert name in found, (name, words, found)


async def test_a_loaded_tool_is_sent_from_the_next_request_on_and_runs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    turns = [
        searched("list folder contents"),
        tool_turn("LS", {"path": str(tmp_path)}),
        searched("select:TodoRead,Config"),
        tool_turn("Config", {"setting": "max_turns"}),
        text_turn("done"),
    ]
    with ReplayServer(turns) as server:
        rig = Rig(tmp_path, server.url)
        await rig.agent.run("what is here?")
        requests = list(server.requests)
    assert "LS" not in sent(requests[0]) and sent(requests[1])[-1] == "LS"
    assert sent(requests[3])[-3:] == ["LS", "TodoRead", "Config"], "loaded tools follow, in load order"
    assert sent(requests[0]) == sent(requests[1])[:-1], "the prefix before a loaded tool stays the same"
    results = rig.results()
    assert results["ToolSearch"].startswith("Loaded: TodoRead, Config.")
    assert "notes.txt" in results["LS"] and results["Config"] == "max_turns = 50"


async def test_calling_a_deferred_tool_unloaded_runs_it_and_loads_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    with ReplayServer([tool_turn("LS", {"path": str(tmp_path)}), text_turn("ok")]) as server:
        rig = Rig(tmp_path, server.url)
        await rig.agent.run("list it")
        requests = list(server.requests)
    assert "notes.txt" in rig.results()["LS"]
    assert "LS" not in sent(requests[0]) and "LS" in sent(requests[1])


async def test_a_deferred_tools_deny_rule_still_denies_loaded_or_not(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").write_text("x\n")
    turns = [
        tool_turn("Delete", {"path": str(tmp_path / "gone.txt")}),
        searched("select:LS,Delete"),
        tool_turn("LS", {"path": str(tmp_path)}),
        tool_turn("Delete", {"path": str(tmp_path / "gone.txt")}),
        text_turn("ok"),
    ]
    with ReplayServer(turns) as server:
        rig = Rig(tmp_path, server.url)
        rig.session.settings.permissions.deny = ["LS", "Delete"]
        rig.session.settings.permission_mode = "bypassPermissions"
        await rig.agent.run("clean up")
        requests = list(server.requests)
    denied = [m["content"] for m in rig.session.messages if m["role"] == "tool" and "denied" in m["content"]]
    assert len(denied) == 3 and all(text.startswith("Error: ") for text in denied)
    assert (tmp_path / "gone.txt").exists()
    assert {"LS", "Delete"} <= set(sent(requests[2])), "loading is not allowing"


async def test_plan_mode_still_blocks_a_loaded_mutating_tool(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    turns = [
        searched("select:Move"),
        tool_turn("Move", {"from": str(tmp_path / "a.txt"), "to": str(tmp_path / "b.txt")}),
        text_turn("ok"),
    ]
    with ReplayServer(turns) as server:
        rig = Rig(tmp_path, server.url)
        rig.session.settings.permission_mode = "plan"
        await rig.agent.run("rename it")
    assert rig.results()["Move"].startswith("Error: ") and (tmp_path / "a.txt").exists()


async def run_search(registry: ToolCatalog, query: str) -> str:
    executor = Executor(registry, registry.session, policy=RulePolicy(None), services=Services())
    output = await executor.run_one(ToolCall("s1", "ToolSearch", {"query": query}))
    return output.content


async def test_subagents_cannot_load_what_their_type_leaves_out(tmp_path: Path) -> None:
    parent = default_registry(cwd=tmp_path)
    explore = tools_for(subagent_type("Explore"), parent)
    general = tools_for(subagent_type("general-purpose"), parent)
    for query in ("select:Delete", "select:Move", "select:RunCode", "select:TaskStop", "delete a file"):
        loaded = loaded_names(await run_search(explore, query))
        assert not {"Delete", "Move", "RunCode", "TaskStop"} & set(loaded), (query, loaded)
    assert (await run_search(explore, "select:LS,WebFetch")).startswith("Loaded: LS, WebFetch.")
    for name in ("TaskOutput", "TaskStop", "ExitPlanMode", "Agent", "AskUserQuestion"):
        assert (await run_search(general, f"select:{name}")).startswith(
            "No tool this session may use matches"
        )
    offer = make_offer(explore, set(), ["Delete", "Move", "LS"], 2_000, tools_tokens)
    assert [
        t["function"]["name"] for t in offer.sent if t["function"]["name"] in ("Delete", "Move", "LS")
    ] == ["LS"]


async def test_search_finds_nothing_the_policy_or_session_does_not_offer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    policy = {"disabled_tools": ["WebFetch", "Delete"], "output_style": "tutor"}
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    monkeypatch.setenv("GOAT_MANAGED_DIR", str(managed))
    registry = default_registry(cwd=tmp_path / "ws")
    for query in ("select:WebFetch", "fetch url", "select:Delete", "select:BashOutput", "select:RunCell"):
        loaded = loaded_names(await run_search(registry, query))
        assert not {"WebFetch", "Delete", "BashOutput", "RunCell"} & set(loaded), (query, loaded)
    offer = make_offer(registry, {"RunCell"}, ["WebFetch", "Delete", "RunCell", "LS"], 2_000, tools_tokens)
    names = [t["function"]["name"] for t in offer.sent]
    assert "LS" in names and not {"WebFetch", "Delete", "RunCell"} & set(names)
    assert "WebFetch" not in offer.deferred.names()
    called = await Executor(registry, registry.session).run_one(
        ToolCall("c", "WebFetch", {"url": "http://x"})
    )
    assert called.is_error and "disabled by the managed policy" in called.content


async def test_the_lean_profile_offers_no_search_and_no_loaded_tool(tmp_path: Path) -> None:
    turns = [searched("select:LS"), text_turn("ok")]
    with ReplayServer(turns) as server:
        rig = Rig(tmp_path, server.url)
        rig.session.settings.tool_profile = "lean"
        await rig.agent.run("x")
        requests = list(server.requests)
    assert all("ToolSearch" not in sent(r) and "LS" not in sent(r) for r in requests)


async def test_loaded_tools_survive_resuming_the_session(tmp_path: Path) -> None:
    with ReplayServer([searched("select:WebSearch"), text_turn("ok")]) as server:
        rig = Rig(tmp_path, server.url)
        await rig.agent.run("x")
        path = rig.session.path
        rig.session.release()
    with ReplayServer([text_turn("again")]) as server:
        resumed = Rig(tmp_path, server.url)
        resumed.session = load_session(path, tmp_path)
        resumed.session.settings.tool_profile = "full"
        resumed.agent = Agent(
            resumed.session, resumed.registry, resumed.executor, resumed.agent.llm, resumed.events.append
        )
        await resumed.agent.run("y")
        assert sent(server.requests[0])[-1] == "WebSearch"


@pytest.fixture
async def warehouses(tmp_path: Path) -> AsyncIterator[McpManager]:
    """A real stdio MCP server with 300 tools (a project's server could be anything)."""
    servers = {
        "stock": {"command": sys.executable, "args": [DEMO, "--warehouses", "300"]},
        "small": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
    }
    manager = McpManager(tmp_path, servers, timeouts=TIMEOUTS, environ={})
    yield manager
    await manager.close()


async def test_an_mcp_server_with_hundreds_of_tools_cannot_flood_the_request(
    tmp_path: Path, warehouses: McpManager
) -> None:
    turns = [
        searched("warehouse 137 stock"),
        tool_turn("mcp__stock__warehouse_137", {"sku": "bolt"}),
        text_turn("7 bolts"),
    ]
    with ReplayServer(turns) as server:
        rig = Rig(tmp_path, server.url, Services(mcp=warehouses, kernel=KernelService(shell=None)))
        warehouses.bind(rig.registry)
        await warehouses.wait_ready()
        assert len([n for n in rig.registry.names() if n.startswith("mcp__stock__")]) == 309
        await rig.agent.run("how many bolts in warehouse 137?")
        requests = list(server.requests)
    first = requests[0]
    names = sent(first)
    assert not [n for n in names if n.startswith("mcp__stock__")]
    assert "mcp__small__get_current_time" in names, "a server within the budget is sent whole"
    small = [t for t in first["tools"] if t["function"]["name"].startswith("mcp__small__")]
    assert request_tokens(first["messages"], first["tools"]) - tools_tokens(small) <= FIRST_REQUEST_CAP
    listing = next(t for t in first["tools"] if t["function"]["name"] == "ToolSearch")["function"]
    assert "MCP server stock (mcp__stock__*): 309 tools" in listing["description"]
    assert rig.results()["ToolSearch"].startswith("Loaded: mcp__stock__warehouse_137")
    assert sent(requests[1]).count("mcp__stock__warehouse_137") == 1
    assert "warehouse 137 holds 7 of bolt" in rig.results()["mcp__stock__warehouse_137"]


async def test_the_mcp_budget_setting_decides_what_is_deferred(
    tmp_path: Path, warehouses: McpManager
) -> None:
    registry = default_registry(cwd=tmp_path)
    warehouses.bind(registry)
    await warehouses.wait_ready()
    every = make_offer(registry, set(), [], 10_000_000, tools_tokens)
    assert not any(name.startswith("mcp__") for name in every.deferred.names())
    none = make_offer(registry, set(), [], 0, tools_tokens)
    assert {"mcp__small__get_current_time", "mcp__stock__warehouse_000"} <= none.deferred.names()
    assert "MCP server small (mcp__small__*): get_current_time, convert_time." in next(
        t["function"]["description"] for t in none.sent if t["function"]["name"] == "ToolSearch"
    )


OFFERED = offered_tools(default_registry(cwd=Path.cwd()), {"RunCell"})


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=80)
    | st.lists(st.sampled_from(["select:", "LS", ",", " ", "runcell", "Web"])).map("".join)
)
def test_any_query_returns_only_offered_tools(query: str) -> None:
    found = search(query, OFFERED, 5)
    assert len(found) <= 5 and all(t in OFFERED for t in found)
