"""Nothing the model sends can end the run (issue 10, point 4): every tool's input schema is fuzzed
through the real executor with RulePolicy and an approver that denies every prompt. Each call
returns a result (never raises), within 10 s, and no file outside the workspace changes."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from goat_jupyter.permissions.point import CallTool
from goat_jupyter.permissions.policy import RulePolicy
from goat_jupyter.settings import load_settings
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput
from goat_jupyter.tools.mcp.mcp_tool import McpTool
from goat_jupyter.tools.runner import Executor, HookOutcome, NoHooks
from tests.permissions.test_hostile_model import DenyingApprover

CALL_LIMIT_S = 10.0
FUZZ = settings(
    max_examples=40,
    deadline=None,  # the 10 s limit is enforced per call below, not per example
    derandomize=True,  # the same examples in every CI run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

PATH_PIECES = [
    "..", ".", "", "/", "~", "~root", ".goat", ".GOAT", ".claude", ".mcp.json", "settings.json",
    "secrets", "a.txt", "\x00", "\n", "\r", "\t", "\x1b[31m", "/etc/passwd", "/dev/zero", "/proc/self",
    "*", "**", "?", "[", "{a,b}", "$HOME", "${HOME}", "`id`", "$(id)", "%2e%2e", "\u202e", "\ud7ff",
    "é", "ﬁ", "𝔘", "CON", "nul", " ", "-rf", "--", "|", ";", "&&", "'", '"', "\\",
]  # fmt: skip

hostile_text = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(PATH_PIECES), max_size=6).map("/".join),
    st.lists(st.sampled_from(PATH_PIECES), max_size=6).map("".join),
    st.builds(
        lambda piece, n: piece * n, st.sampled_from(["a", "\x00", "../", "é", "*"]), st.integers(0, 200_000)
    ),
    st.characters(max_codepoint=0x1F).map(str),
)
scalars = st.one_of(
    hostile_text,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)),
    max_leaves=8,
)


def typed(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value of the schema's own type (mostly hostile) or of any other type."""
    kind = schema.get("type")
    right: st.SearchStrategy[Any] = {
        "string": hostile_text,
        "integer": st.integers(min_value=-(2**70), max_value=2**70),
        "number": st.floats(allow_nan=True, allow_infinity=True),
        "boolean": st.booleans(),
        "array": st.lists(values, max_size=4),
        "object": st.dictionaries(hostile_text, values, max_size=4),
    }.get(str(kind), values)
    if "enum" in schema:
        right = st.one_of(st.sampled_from(schema["enum"]), right)
    return st.one_of(right, right, values)


def arguments_for(tool: Tool[Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = tool.parameters_schema().get("properties", {})
    fields = {name: typed(spec) for name, spec in properties.items()}
    known = st.fixed_dictionaries({}, optional=fields) if fields else st.just({})
    extra = st.dictionaries(hostile_text, values, max_size=2)
    return st.one_of(known, known, st.builds(lambda a, b: {**b, **a}, known, extra))


class EchoMcpClient:
    async def call_tool(self, server: str, tool: str, args: dict[str, Any], ctx: Any) -> str:
        return json.dumps(args, default=str)[:200]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Executor, Path]]:
    """A workspace with settings and a secret; a home and a folder beside it that must not change."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "home" / ".goat"))
    ws = tmp_path / "ws"
    for name, text in {
        "ws/.goat/settings.json": json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}}),
        "ws/secrets/key.txt": "secret",
        "ws/a.txt": "a\n",
        "ws/nb.ipynb": json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        "outside/data.txt": "far",
        "home/.bashrc": "# rc",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    registry = default_registry(cwd=ws)
    registry.register(McpTool("srv", "peek", "Look.", {}, {"readOnlyHint": True}, EchoMcpClient()))
    registry.session.settings = load_settings(ws)
    before = outside_snapshot(tmp_path)
    yield Executor(registry, registry.session, policy=RulePolicy(DenyingApprover())), ws
    assert outside_snapshot(tmp_path) == before
    assert (ws / ".goat" / "settings.json").read_text() == json.dumps(
        {"permissions": {"deny": ["Read(./secrets/**)"]}}
    )
    assert (ws / "secrets" / "key.txt").read_text() == "secret"


def outside_snapshot(root: Path) -> dict[str, bytes]:
    """Everything under `root` except the workspace's own (non-protected) files."""
    found: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) != root / "ws"]
        for name in files:
            path = Path(folder) / name
            found[str(path)] = path.read_bytes()
        found.update({str(Path(folder, d)): b"dir" for d in dirs})
    return found


def run(executor: Executor, call: ToolCall) -> ToolOutput:
    async def bounded() -> ToolOutput:
        return await asyncio.wait_for(executor.run_one(call), CALL_LIMIT_S)

    return asyncio.run(bounded())


TOOL_NAMES = [*sorted(t.name for t in default_registry(cwd=Path.cwd()).tools()), "mcp__srv__peek"]


@pytest.mark.parametrize("tool_name", TOOL_NAMES)
def test_every_tool_survives_hostile_arguments(sandbox: tuple[Executor, Path], tool_name: str) -> None:
    executor, _ = sandbox
    tool = executor.registry.get(tool_name)
    assert tool is not None
    cwd = os.getcwd()

    @FUZZ
    @given(args=arguments_for(tool))
    def check(args: dict[str, Any]) -> None:
        out = run(executor, ToolCall("fuzz", tool_name, args))
        assert isinstance(out, ToolOutput) and out.content
        if out.is_error:
            assert out.content.startswith("Error: ") and out.error_code, out.content

    check()
    assert os.getcwd() == cwd  # no tool moved the whole process elsewhere


@FUZZ
@given(
    name=st.one_of(st.sampled_from(TOOL_NAMES), hostile_text),
    raw=st.one_of(hostile_text, values.map(json.dumps)),
)
def test_raw_argument_text_never_raises(sandbox: tuple[Executor, Path], name: str, raw: str) -> None:
    executor, _ = sandbox
    out = run(executor, ToolCall("raw", name, raw))
    assert isinstance(out, ToolOutput) and out.content


def test_deeply_nested_json_is_an_error_result(sandbox: tuple[Executor, Path]) -> None:
    executor, _ = sandbox
    out = run(executor, ToolCall("deep", "Read", "[" * 100_000 + "]" * 100_000))
    assert out.is_error and out.error_code


# --- exceptions in the other stages of a call ----------------------------------------------------


class ExplodingHooks(NoHooks):
    async def pre_tool_use(self, name: str, args: dict[str, Any], ctx: ToolContext) -> HookOutcome:
        raise RuntimeError("hook runner bug")


class ExplodingPolicy:
    async def decide(self, tool: Tool[Any], args: ToolInput, ctx: ToolContext, hook: HookOutcome) -> Any:
        raise KeyError("policy bug")

    def read_deny_checker(self, session: Any) -> None:
        return None


class ExplodingCheckpoints:
    async def before_tool(self, tool: CallTool, args: BaseModel, ctx: ToolContext) -> None:
        raise OSError("disk full")

    async def after_tool(self, pending: Any, output: ToolOutput) -> None:
        return None


@pytest.mark.parametrize("stage", ["hooks", "policy", "checkpoints"])
def test_an_exception_in_any_stage_becomes_an_error_result(
    sandbox: tuple[Executor, Path], stage: str
) -> None:
    executor, ws = sandbox
    if stage == "hooks":
        executor.hooks = ExplodingHooks()
    elif stage == "policy":
        executor.policy = ExplodingPolicy()
    else:
        executor.services.checkpoints = ExplodingCheckpoints()
    out = run(executor, ToolCall("x", "Write", {"file_path": "new.txt", "content": "x"}))
    assert out.is_error and out.error_code == "EXECUTION_ERROR" and "failed unexpectedly" in out.content
    assert not (ws / "new.txt").exists()
