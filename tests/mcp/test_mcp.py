"""MCP client against real servers: mcp-server-time, mcp-server-git, and tests/mcp/demo_server.py
over stdio and streamable HTTP (real subprocesses, real pipes, real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.config.trust import folder_state, trust_folder
from goat_jupyter.mcp_client import McpManager, McpTimeouts, attach_mcp, load_mcp_config
from goat_jupyter.mcp_client.client import ServerConnection
from goat_jupyter.mcp_client.config import HttpServerConfig, StdioServerConfig
from goat_jupyter.mcp_client.tool_changes import ToolChangeFollower
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.base import ToolOutput
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.events import Event, ToolProgress
from goat_jupyter.tools.registry import Registry
from goat_jupyter.tools.runner import Executor, ToolCall

pytestmark = pytest.mark.timeout(90)

DEMO = str(Path(__file__).with_name("demo_server.py"))
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
TEST_TIMEOUTS = McpTimeouts(connect_s=40, call_s=20, request_s=20, first_turn_wait_s=40)


def demo(*extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [DEMO, *extra]}


class Rig:
    """A manager bound to a real registry, and an executor that calls tools like the agent does."""

    def __init__(self, workspace: Path, servers: dict[str, Any], timeouts: McpTimeouts) -> None:
        self.registry: Registry = default_registry(cwd=workspace)
        self.manager = McpManager(workspace, servers, timeouts=timeouts, environ={}).bind(self.registry)
        self.events: list[Event] = []
        self.executor = Executor(
            self.registry, self.registry.session, services=Services(mcp=self.manager), emit=self.events.append
        )
        self._calls = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        self._calls += 1
        return await self.executor.run_one(ToolCall(f"call_{self._calls}", name, arguments))

    def mcp_tools(self, server: str) -> list[str]:
        return [name for name in self.registry.names() if name.startswith(f"mcp__{server}__")]


RigFactory = Callable[..., Any]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[RigFactory]:
    """`await rig(servers, timeouts=...)`: a connected Rig; every server is stopped afterwards."""
    made: list[Rig] = []

    async def make(servers: dict[str, Any], timeouts: McpTimeouts = TEST_TIMEOUTS, wait: bool = True) -> Rig:
        made.append(Rig(tmp_path, servers, timeouts))
        if wait:
            await made[-1].manager.wait_ready()
        return made[-1]

    yield make
    for item in made:
        await item.manager.close()


# ---------------------------------------------------------------- configuration (no processes)


def test_mcp_json_and_settings_are_merged_validated_and_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "${TZ_NAME:-UTC}"]},
        "api.v2": {"type": "http", "url": "${API_URL}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "secret": {"command": "srv", "env": {"KEY": "${MISSING_VAR}"}},
        "broken": {"args": ["no command"]},
        "overridden": {"command": "from-file"},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    environ = {"API_URL": "https://api.example.test", "TOKEN": "t0k"}
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat_home"))
    untrusted = load_mcp_config(tmp_path, {"overridden": {"command": "from-settings"}}, environ)
    assert list(untrusted.servers) == ["overridden"] and "time" in untrusted.untrusted
    trust_folder(tmp_path, folder_state(tmp_path).digest)
    config = load_mcp_config(tmp_path, {"overridden": {"command": "from-settings"}}, environ)

    time = config.servers["time"]
    assert isinstance(time, StdioServerConfig) and time.args == ["mcp-server-time", "--local-timezone", "UTC"]
    api = config.servers["api_v2"]  # the name is normalised to [A-Za-z0-9_-]
    assert isinstance(api, HttpServerConfig)
    assert api.url == "https://api.example.test/mcp" and api.headers == {"Authorization": "Bearer t0k"}
    assert config.servers["events"].type == "sse"
    assert "MISSING_VAR" in config.errors["secret"]
    assert "command" in config.errors["broken"]
    overridden = config.servers["overridden"]
    assert isinstance(overridden, StdioServerConfig) and overridden.command == "from-settings"
    assert config.sources["overridden"] == "settings" and config.sources["time"] == ".mcp.json"


def test_unreadable_mcp_json_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{ not json")
    config = load_mcp_config(tmp_path, {"demo": demo()}, {})
    assert list(config.servers) == ["demo"]
    assert ".mcp.json could not be read" in config.problems[0]


def test_timeouts_come_from_claude_code_variables() -> None:
    timeouts = McpTimeouts.from_env(
        {"MCP_TIMEOUT": "2500", "MCP_TOOL_TIMEOUT": "90000", "GOAT_MCP_STARTUP_WAIT_MS": "0"}
    )
    assert (timeouts.connect_s, timeouts.call_s, timeouts.first_turn_wait_s) == (2.5, 90.0, 0.0)
    assert McpTimeouts.from_env({"MCP_TIMEOUT": "soon"}).connect_s == McpTimeouts().connect_s


# ---------------------------------------------------------------- the official reference servers


async def test_time_server_tools_are_registered_with_schemas_and_answer(rig: RigFactory) -> None:
    r: Rig = await rig({"time": TIME})
    assert r.mcp_tools("time") == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    tool = r.registry.get("mcp__time__get_current_time")
    assert tool is not None
    schema = tool.parameters_schema()
    assert schema["required"] == ["timezone"] and schema["properties"]["timezone"]["type"] == "string"
    offered = {t["function"]["name"]: t["function"] for t in r.registry.llm_tools()}
    assert offered["mcp__time__get_current_time"]["parameters"]["properties"]["timezone"]
    assert "current time" in offered["mcp__time__get_current_time"]["description"].lower()

    now = await r.call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
    assert not now.is_error, now.content
    answer = json.loads(now.content)
    assert answer["timezone"] == "Asia/Tokyo"
    assert datetime.fromisoformat(answer["datetime"]).utcoffset() is not None

    converted = await r.call(
        "mcp__time__convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )
    assert "T21:00" in json.loads(converted.content)["target"]["datetime"]

    wrong = await r.call("mcp__time__get_current_time", {"timezone": "Nowhere/Atlantis"})
    assert wrong.is_error and wrong.content.startswith("Error: ") and "Nowhere/Atlantis" in wrong.content


@pytest.fixture
def git_repo(tmp_path: Path) -> Iterator[Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "config", "user.email", "goat@example.test"],
        ["git", "config", "user.name", "Goat"],
    ):
        subprocess.run(command, cwd=repo, check=True)
    (repo / "notes.txt").write_text("first line\n")
    yield repo


async def test_git_server_annotations_map_to_risk_and_status_works(rig: RigFactory, git_repo: Path) -> None:
    git = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(git_repo)]}
    r: Rig = await rig({"git": git})
    risks = {name: getattr(r.registry.get(name), "risk", None) for name in r.mcp_tools("git")}
    assert risks["mcp__git__git_status"] == "low"  # readOnlyHint
    assert risks["mcp__git__git_commit"] == "high"  # neither hint
    assert risks["mcp__git__git_reset"] == "critical"  # destructiveHint
    status_tool = r.registry.get("mcp__git__git_status")
    assert status_tool is not None and status_tool.side_effect == "read_only"

    status = await r.call("mcp__git__git_status", {"repo_path": str(git_repo)})
    assert not status.is_error, status.content
    assert "notes.txt" in status.content


# ---------------------------------------------------------------- the demo server: results, resources


async def test_results_images_errors_and_unusual_names(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo()})
    echo = await r.call("mcp__demo__echo", {"text": "hi", "times": 3})
    assert echo.content == "hi hi hi" and not echo.is_error

    pixel = await r.call("mcp__demo__pixel", {})
    assert "one transparent pixel" in pixel.content
    assert [a.mime_type for a in pixel.attachments] == ["image/png"]

    failed = await r.call("mcp__demo__fail", {})
    assert failed.is_error and failed.error_code == "EXECUTION_ERROR"
    assert "failed on purpose" in failed.content

    counted = await r.call("mcp__demo__count", {"n": 3})
    assert counted.content == "counted to 3"
    progress = "".join(e.output or "" for e in r.events if isinstance(e, ToolProgress))
    assert "[progress 3/3] step 3" in progress

    assert "mcp__demo__dotted_name" in r.mcp_tools("demo")  # `dotted.name` is not a valid function name
    dotted = await r.call("mcp__demo__dotted_name", {})
    assert dotted.content == "dotted ok"


async def test_tools_the_server_adds_at_run_time_are_registered(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo()})
    assert "mcp__demo__grown" not in r.mcp_tools("demo")
    grew = await r.call("mcp__demo__grow", {})
    assert grew.content == "grew"
    for _ in range(200):  # the change arrives on its own stream, just after the call's answer
        if "mcp__demo__grown" in r.mcp_tools("demo"):
            break
        await asyncio.sleep(0.05)
    assert "mcp__demo__grown" in r.mcp_tools("demo")
    grown = await r.call("mcp__demo__grown", {})
    assert grown.content == "grown ok" and not grown.is_error
    assert "mcp__demo__echo" in r.mcp_tools("demo")  # the others stay


async def test_an_older_protocol_announces_tool_changes_by_notification() -> None:
    from mcp import Client, StdioServerParameters

    refreshed = asyncio.Event()

    async def refresh() -> None:
        refreshed.set()

    follower = ToolChangeFollower(refresh)
    server = StdioServerParameters(command=sys.executable, args=[DEMO])
    async with Client(server, mode="legacy", message_handler=follower.on_message) as client:
        assert client.protocol_version < "2026-07-28"
        following = asyncio.ensure_future(follower.follow(client))
        assert not refreshed.is_set()
        await client.call_tool("grow", {})
        await asyncio.wait_for(refreshed.wait(), 20)
        following.cancel()


async def test_list_and_read_resources(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo(), "time": TIME})
    listed = await r.call("ListMcpResources", {})
    entries = json.loads(listed.content)
    assert {(e["server"], e["uri"]) for e in entries} == {
        ("demo", "demo://greeting"),
        ("demo", "demo://pixel.png"),
    }
    greeting = next(e for e in entries if e["uri"] == "demo://greeting")
    assert greeting["mimeType"] == "text/plain" and greeting["description"] == "A greeting"

    only_time = await r.call("ListMcpResources", {"server": "time"})
    assert "No resources" in only_time.content and not only_time.is_error

    text = await r.call("ReadMcpResource", {"server": "demo", "uri": "demo://greeting"})
    assert text.content == "hello from the demo resource"
    image = await r.call("ReadMcpResource", {"server": "demo", "uri": "demo://pixel.png"})
    assert [a.mime_type for a in image.attachments] == ["image/png"]

    missing = await r.call("ReadMcpResource", {"server": "demo", "uri": "demo://nothing"})
    assert missing.is_error and "demo://nothing" in missing.content
    unknown = await r.call("ListMcpResources", {"server": "nosuch"})
    assert unknown.is_error and "demo" in unknown.content and "time" in unknown.content


# ---------------------------------------------------------------- failures are isolated


async def test_killed_server_gives_an_error_then_the_next_call_reconnects(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo()})
    first_pid = (await r.call("mcp__demo__pid", {})).content

    crashed = await r.call("mcp__demo__crash", {})  # the server process exits mid-call
    assert crashed.is_error and "closed the connection" in crashed.content
    conn = r.manager.connections["demo"]
    assert conn.status == "failed" and "connection lost" in conn.error
    assert "mcp__demo__pid" in r.mcp_tools("demo")  # kept, so the model's next call can reconnect

    again = await r.call("mcp__demo__pid", {})
    assert not again.is_error, again.content
    assert again.content != first_pid  # a new server process answered
    assert conn.status == "connected"


async def test_hanging_tool_times_out_and_the_server_stays_usable(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo()}, McpTimeouts(connect_s=40, call_s=0.5))
    pid = (await r.call("mcp__demo__pid", {})).content
    hung = await r.call("mcp__demo__hang", {"seconds": 30})
    assert hung.is_error and hung.error_code == "TIMEOUT"
    assert "0.5 s" in hung.content
    assert (await r.call("mcp__demo__pid", {})).content == pid  # same process, still connected


async def test_missing_command_fails_alone_while_other_servers_work(rig: RigFactory) -> None:
    servers = {
        "ghost": {"command": "/nonexistent/mcp-server"},
        "grumpy": demo("--fail-at-start"),
        "demo": demo(),
        "bad": {"type": "http", "url": "ftp://nowhere"},
    }
    r: Rig = await rig(servers)
    statuses = {name: conn.status for name, conn in r.manager.connections.items()}
    assert statuses == {"ghost": "failed", "grumpy": "failed", "demo": "connected"}
    assert "command not found: /nonexistent/mcp-server" in r.manager.connections["ghost"].error
    assert "refusing to start" in r.manager.connections["grumpy"].error  # the server's stderr
    assert r.mcp_tools("ghost") == [] and r.mcp_tools("grumpy") == []
    assert (await r.call("mcp__demo__echo", {"text": "still here"})).content == "still here"

    report = r.manager.command([])
    assert "ghost" in report and "command not found" in report and "mcp__demo__echo" in report
    assert "bad" in report and "http:// or https://" in report
    listed = await r.call("ListMcpResources", {})
    assert "demo://greeting" in listed.content and "ghost" in listed.content


async def test_disconnect_removes_the_tools_and_reconnect_brings_them_back(rig: RigFactory) -> None:
    r: Rig = await rig({"demo": demo(), "time": TIME})
    assert r.mcp_tools("demo")
    await r.manager.disconnect("demo")
    assert r.mcp_tools("demo") == [] and r.manager.connections["demo"].status == "disconnected"
    assert r.mcp_tools("time")  # the other server is untouched
    gone = await r.call("mcp__demo__echo", {"text": "x"})
    assert gone.is_error and gone.error_code == "UNKNOWN_TOOL"

    await r.manager.reconnect(["demo"])
    await r.manager.connections["demo"].wait_settled(None)
    assert "mcp__demo__echo" in r.mcp_tools("demo")


async def test_first_turn_waits_only_so_long_and_late_servers_join_later(rig: RigFactory) -> None:
    timeouts = McpTimeouts(connect_s=40, first_turn_wait_s=0.2)
    r: Rig = await rig({"slow": demo("--slow-start", "3"), "demo": demo()}, timeouts, wait=False)
    await r.manager.wait_ready()
    slow = r.manager.connections["slow"]
    assert slow.status == "connecting" and r.mcp_tools("slow") == []  # the turn went on without it
    await r.manager.wait_ready(timeout_s=60)  # later turns never wait
    assert slow.status == "connecting"

    await slow.wait_settled(None)
    assert slow.status == "connected" and "mcp__slow__echo" in r.mcp_tools("slow")


async def test_connect_timeout_fails_the_server_cleanly(rig: RigFactory) -> None:
    r: Rig = await rig({"slow": demo("--slow-start", "30")}, McpTimeouts(connect_s=0.5))
    slow = r.manager.connections["slow"]
    assert slow.status == "failed" and "did not connect within 0.5 s" in slow.error


async def test_a_new_registry_gets_the_connected_tools(rig: RigFactory, tmp_path: Path) -> None:
    r: Rig = await rig({"demo": demo()})
    fresh = default_registry(cwd=tmp_path)  # what %goat reset builds
    assert attach_mcp(r.manager, fresh, fresh.session) is r.manager
    assert "mcp__demo__echo" in fresh.names()


class PlainTable:
    """A ToolTable that is not the tools' Registry: the manager needs nothing of tools/."""

    def __init__(self) -> None:
        self.shown: dict[str, list[str]] = {}  # server -> the names of the tools it listed

    def show_mcp_tools(self, manager: McpManager, conn: ServerConnection) -> None:
        self.shown[conn.name] = [tool.name for tool in conn.tools]

    def unregister_mcp_tools(self, prefix: str) -> list[str]:
        server = prefix.removeprefix("mcp__").removesuffix("__")
        return self.shown.pop(server, [])

    def names(self) -> list[str]:
        return [f"mcp__{server}__{tool}" for server, tools in self.shown.items() for tool in tools]


async def test_the_manager_serves_plain_mcp_data_to_any_tool_table(tmp_path: Path) -> None:
    table = PlainTable()
    manager = McpManager(tmp_path, {"my demo": demo()}, timeouts=TEST_TIMEOUTS, environ={}).bind(table)
    try:
        await manager.wait_ready()
        assert "dotted.name" in table.shown["my_demo"]  # the server's own names; tools/ makes them safe
        echoed = await manager.call_tool("my demo", "echo", {"text": "hi", "times": 2})  # any spelling
        assert [block.type for block in echoed.content] == ["text"] and not echoed.is_error
        listing = await manager.list_resources()
        assert {(server, str(res.uri)) for server, res in listing.resources} >= {
            ("my_demo", "demo://greeting")
        }
        assert listing.problems == []
        read = await manager.read_resource("my demo", "demo://greeting")
        assert getattr(read.contents[0], "text", None) == "hello from the demo resource"
        assert "mcp__my_demo__echo" in manager.command([])  # the report lists what the table offers
        await manager.disconnect("my_demo")
        assert table.shown == {}
    finally:
        await manager.close()


async def test_resource_titles_name_the_server_as_its_tools_do(rig: RigFactory) -> None:
    r: Rig = await rig({"my demo": demo()})
    for spelling in ("my demo", "my_demo"):
        text = await r.call("ReadMcpResource", {"server": spelling, "uri": "demo://greeting"})
        assert text.title == "my_demo: demo://greeting" and not text.is_error
    other = await r.call("ReadMcpResource", {"server": "my-demo", "uri": "demo://greeting"})
    assert other.is_error and "my-demo" in other.content  # `-` is kept, so this is another name


# ---------------------------------------------------------------- streamable HTTP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def start_http_demo(port: int, transport: str = "--http") -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, DEMO, transport, str(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(1500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            await asyncio.sleep(0.02)
    process.kill()
    raise TimeoutError("the HTTP demo server did not start")


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.kill()
    await process.wait()


@pytest.fixture
async def http_demo() -> AsyncIterator[tuple[int, list[asyncio.subprocess.Process]]]:
    port = free_port()
    processes = [await start_http_demo(port)]
    yield port, processes
    for process in processes:
        await stop(process)


async def test_streamable_http_server(
    rig: RigFactory, http_demo: tuple[int, list[asyncio.subprocess.Process]]
) -> None:
    port, processes = http_demo
    server = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "1"}}
    r: Rig = await rig({"web": server})
    assert r.manager.connections["web"].status == "connected"
    assert (await r.call("mcp__web__echo", {"text": "over http"})).content == "over http"
    read = await r.call("ReadMcpResource", {"server": "web", "uri": "demo://greeting"})
    assert read.content == "hello from the demo resource"

    await stop(processes[0])
    down = await r.call("mcp__web__echo", {"text": "anyone?"})
    assert down.is_error and "web" in down.content

    processes.append(await start_http_demo(port))
    back = await r.call("mcp__web__echo", {"text": "back"})
    assert back.content == "back", back.content


async def test_sse_server(rig: RigFactory) -> None:
    port = free_port()
    process = await start_http_demo(port, "--sse")
    try:
        r: Rig = await rig({"old": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}})
        assert r.manager.connections["old"].status == "connected", r.manager.connections["old"].error
        assert (await r.call("mcp__old__echo", {"text": "over sse"})).content == "over sse"
        read = await r.call("ReadMcpResource", {"server": "old", "uri": "demo://greeting"})
        assert read.content == "hello from the demo resource"
    finally:
        await stop(process)
