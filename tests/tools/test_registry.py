"""Registry: order, lookup, (un)registration, MCP tools, LLM schemas, allow-list, thread safety."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.state import SessionState
from goat_jupyter.tools import Registry, Tool, ToolContext, ToolInput, ToolOutput, default_registry
from goat_jupyter.tools.mcp.mcp_tool import McpTool

SEED_ORDER = [
    "Agent",
    "Bash",
    "TaskOutput",
    "ExitPlanMode",
    "Edit",
    "Read",
    "Write",
    "Glob",
    "Grep",
    "TaskStop",
    "ListMcpResources",
    "NotebookEdit",
    "ReadMcpResource",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "AskUserQuestion",
    "Config",
]
GOAT_ADDITIONS = ["LS", "Delete", "Move", "RunCode", "TodoRead", "RunCell", "KernelInspect", "ToolSearch"]
HIDDEN_ALIASES = ["BashOutput", "KillShell"]
TEAM_TOOLS = ["TeamCreate", "SendMessage", "TeamDelete"]


class EchoInput(ToolInput):
    text: str = ""


class EchoTool(Tool[EchoInput]):
    """A tiny tool whose name and description are set per instance."""

    name = "Echo"
    input_model = EchoInput
    side_effect = "read_only"

    def __init__(self, name: str = "Echo", description: str = "Echoes text.") -> None:
        super().__init__()
        self.name = name  # pyright: ignore[reportAttributeAccessIssue]
        self._description = description

    async def run(self, args: EchoInput, ctx: ToolContext) -> ToolOutput | str:
        return args.text


class FakeMcpClient:
    """Stands in for an MCP client session: records calls and answers with fixed text."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def call_tool(self, *args: Any, **kwargs: Any) -> str:
        self.calls.append((*args, *kwargs.values()))
        return "the server answered"


@pytest.fixture(autouse=True)
def no_teams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOAT_EXPERIMENTAL_AGENT_TEAMS", raising=False)


def test_names_follow_seed_order_then_goat_additions(tmp_path: Path) -> None:
    assert default_registry(cwd=tmp_path).names() == SEED_ORDER + GOAT_ADDITIONS + HIDDEN_ALIASES


def test_team_tools_only_when_enabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not set(TEAM_TOOLS) & set(default_registry(cwd=tmp_path).names())
    monkeypatch.setenv("GOAT_EXPERIMENTAL_AGENT_TEAMS", "1")
    assert default_registry(cwd=tmp_path).names()[-3:] == TEAM_TOOLS


def test_get_register_unregister(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    read = registry.get("Read")
    assert read is not None and read.name == "Read"
    assert registry.get("Nope") is None
    echo = EchoTool()
    registry.register(echo)
    assert registry.get("Echo") is echo and registry.names()[-1] == "Echo"
    registry.register(EchoTool(description="replaced"))  # same name: replaced in place, not duplicated
    assert registry.names().count("Echo") == 1 and registry.get("Echo") is not echo
    registry.unregister("Echo")
    registry.unregister("Echo")  # unknown names are ignored
    assert registry.get("Echo") is None and "Echo" not in registry.names()


def test_session_shared_and_rooted_at_cwd(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    assert registry.session.workspace == tmp_path and registry.session.cwd == tmp_path
    session = SessionState(workspace=tmp_path)
    assert default_registry(session=session).session is session


async def test_direct_call_runs_the_tool(tmp_path: Path) -> None:
    registry = Registry(cwd=tmp_path)
    registry.register(EchoTool())
    out = await registry.call("Echo", {"text": "hello"})
    assert out.content == "hello" and not out.is_error
    out = await registry.call("Echo", '{"text": "from json"}')
    assert out.content == "from json"


async def test_mcp_tools_register_call_and_unregister(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    client = FakeMcpClient()
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tool = McpTool("my server", "echo", "Echo via MCP.", schema, {"readOnlyHint": True}, client)
    registry.register(tool)
    registry.register(McpTool("my server", "wipe", "", {}, {"destructiveHint": True}, client))
    registry.register(McpTool("other", "echo", "Other echo.", schema, {}, client))
    assert tool.name == "mcp__my_server__echo" and tool.side_effect == "read_only"
    assert registry.names()[-3:] == ["mcp__my_server__echo", "mcp__my_server__wipe", "mcp__other__echo"]
    offered = {t["function"]["name"]: t["function"] for t in registry.llm_tools()}
    assert offered["mcp__my_server__echo"]["parameters"] == schema
    assert offered["mcp__my_server__echo"]["description"] == "Echo via MCP."
    assert offered["mcp__my_server__wipe"]["description"]  # a fallback description, never empty

    out = await registry.call("mcp__my_server__echo", {"text": "hi"})
    assert out.content == "the server answered" and not out.is_error
    assert "echo" in client.calls[0] and {"text": "hi"} in client.calls[0]

    removed = registry.unregister_mcp_tools("mcp__my_server__")
    assert sorted(removed) == ["mcp__my_server__echo", "mcp__my_server__wipe"]
    assert registry.get("mcp__my_server__echo") is None and registry.get("mcp__other__echo") is not None
    assert registry.unregister_mcp_tools("mcp__my_server__") == []


def test_llm_tools_format_and_hidden_aliases(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    tools = registry.llm_tools()
    names = [t["function"]["name"] for t in tools]
    assert names == SEED_ORDER + GOAT_ADDITIONS
    assert registry.get("BashOutput") is not None and registry.get("KillShell") is not None
    for entry in tools:
        assert set(entry) == {"type", "function"} and entry["type"] == "function"
        function = entry["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert isinstance(function["description"], str) and function["description"].strip()
        assert "${" not in function["description"], function["name"]
        parameters = function["parameters"]
        assert parameters["type"] == "object" and isinstance(parameters["properties"], dict)
        assert "title" not in parameters
    json.dumps(tools)  # plain JSON all the way down


def test_description_placeholders_are_rendered(tmp_path: Path) -> None:
    sub = tmp_path / "notebooks"
    sub.mkdir()
    registry = Registry(SessionState(workspace=tmp_path, cwd=sub))
    registry.register(EchoTool(description="Root ${workspace}; here ${cwd}; dir ${directory}."))
    description = registry.llm_tools()[0]["function"]["description"]
    assert description == f"Root {tmp_path}; here {sub}; dir {sub}."
    read = default_registry(cwd=tmp_path).llm_tools()
    read_description = next(t["function"]["description"] for t in read if t["function"]["name"] == "Read")
    # Built-in descriptions name no paths (issue 11): the tool definitions stay byte-identical when
    # the cwd changes, so the prompt cache holds; the cwd is in the system prompt and reminders.
    assert str(tmp_path) not in read_description and "the working directory" in read_description


def test_allowed_tools(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    assert registry.with_allowed("Read", "Glob") is registry
    assert registry.is_allowed("Read") and registry.is_allowed("Glob") and not registry.is_allowed("Bash")
    child = registry.subset(["Read", "Glob", "Bash"], exclude={"Bash"})
    assert child.names() == ["Read", "Glob"]
    assert child.is_allowed("Read") and child.session is registry.session
    registry.unregister("Read")
    assert not registry.is_allowed("Read") and child.get("Read") is not None


def test_concurrent_registration_from_threads(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    base = len(registry.names())
    errors: list[BaseException] = []
    done = threading.Event()

    def register_many(worker: int) -> None:
        try:
            for n in range(50):
                registry.register(EchoTool(f"T{worker}_{n}"))
                registry.with_allowed(f"T{worker}_{n}")
        except BaseException as exc:  # pragma: no cover - surfaced by the assertion below
            errors.append(exc)

    def read_constantly() -> None:
        try:
            while not done.is_set():
                registry.names()
                registry.llm_tools()
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    reader = threading.Thread(target=read_constantly)
    reader.start()
    writers = [threading.Thread(target=register_many, args=(w,)) for w in range(8)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    done.set()
    reader.join()
    assert errors == []
    assert len(registry.names()) == base + 8 * 50
    assert all(registry.is_allowed(f"T{w}_{n}") for w in range(8) for n in range(50))
    for worker in range(8):
        mine = [n for n in registry.names() if n.startswith(f"T{worker}_")]
        assert mine == [f"T{worker}_{n}" for n in range(50)]  # each thread's order kept
