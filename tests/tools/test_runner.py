"""Executor: validation, errors, bounding, concurrency, events, permission policy and hooks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest

from goat_jupyter.errors import ConflictError, ToolTimeoutError
from goat_jupyter.tools import Executor, Registry, Tool, ToolCall, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.base import Attachment
from goat_jupyter.tools.events import Event, ToolFinished, ToolProgress, ToolStarted
from goat_jupyter.tools.runner import (
    EMPTY_RESULT,
    MAX_CONCURRENT_READS,
    AllowAll,
    HookOutcome,
    PermissionDecision,
)

FIX_AND_RETRY = "Fix the arguments and call the tool again."


class TextInput(ToolInput):
    text: str = ""
    count: int = 1


class EchoTool(Tool[TextInput]):
    name = "Echo"
    input_model = TextInput
    side_effect = "mutating"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        self.seen.append(args.text)
        return args.text * args.count


class FailingTool(Tool[TextInput]):
    name = "Fail"
    input_model = TextInput

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        raise ConflictError(f"could not do {args.text}", output="partial output")


class BigTool(Tool[TextInput]):
    name = "Big"
    input_model = TextInput
    max_output_chars = 200

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        return "HEAD" + "x\n" * 5000 + "TAIL"


class AttachmentTool(Tool[TextInput]):
    name = "Picture"
    input_model = TextInput

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        return ToolOutput("", attachments=[Attachment("image/png", "iVBORw0KGgo=")])


class Gate:
    """Counts running tools; opens only once `target` of them are running at the same time."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.running = 0
        self.peak = 0
        self.opened = asyncio.Event()

    async def enter(self) -> None:
        self.running += 1
        self.peak = max(self.peak, self.running)
        if self.running >= self.target:
            self.opened.set()
        try:
            await asyncio.wait_for(self.opened.wait(), timeout=5)
        except asyncio.TimeoutError:
            self.running -= 1
            raise ToolTimeoutError(
                f"only {self.running + 1} calls ran together, expected {self.target}"
            ) from None

    def leave(self) -> None:
        self.running -= 1


class GatedRead(Tool[TextInput]):
    """Read-only: returns only when enough calls are running concurrently."""

    name = "GatedRead"
    input_model = TextInput
    side_effect = "read_only"
    gate: ClassVar[Gate | None] = None

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        assert self.gate is not None
        await self.gate.enter()
        await asyncio.sleep(0)
        self.gate.leave()
        return f"read {args.text}"


class Activity:
    def __init__(self) -> None:
        self.active = 0
        self.peak_mutating = 0
        self.active_during_mutation: list[int] = []


class SlowRead(Tool[TextInput]):
    """Read-only: sleeps `count` milliseconds, reports progress, returns its text."""

    name = "SlowRead"
    input_model = TextInput
    side_effect = "read_only"

    def __init__(self, activity: Activity) -> None:
        super().__init__()
        self.activity = activity

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        self.activity.active += 1
        ctx.progress(title=f"reading {args.text}", output="...")
        await asyncio.sleep(args.count / 1000)
        self.activity.active -= 1
        return args.text


class SlowWrite(Tool[TextInput]):
    name = "SlowWrite"
    input_model = TextInput
    side_effect = "mutating"

    def __init__(self, activity: Activity) -> None:
        super().__init__()
        self.activity = activity

    async def run(self, args: TextInput, ctx: ToolContext) -> ToolOutput | str:
        self.activity.active += 1
        self.activity.active_during_mutation.append(self.activity.active)
        await asyncio.sleep(args.count / 1000)
        self.activity.active -= 1
        return args.text


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    registry = Registry(cwd=tmp_path)
    for tool in (EchoTool(), FailingTool(), BigTool(), AttachmentTool(), GatedRead()):
        registry.register(tool)
    return registry


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, name, arguments)


async def test_invalid_input_names_each_bad_field(registry: Registry) -> None:
    out = await registry.call("Echo", {"text": 3, "count": "many", "colour": "red"})
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert out.content.startswith("Error: ")
    assert "text" in out.content and "count" in out.content and "colour: unexpected field" in out.content
    assert out.content.endswith(FIX_AND_RETRY)


async def test_missing_required_field(tmp_path: Path) -> None:
    from goat_jupyter.tools import default_registry

    out = await default_registry(cwd=tmp_path).call("Read", {})
    assert out.error_code == "INVALID_INPUT" and "file_path: required field is missing" in out.content
    assert out.content.endswith(FIX_AND_RETRY)


async def test_malformed_json_arguments(registry: Registry) -> None:
    broken = await registry.call("Echo", '{"text": "unterminated')
    assert broken.error_code == "INVALID_INPUT" and "not valid JSON" in broken.content
    not_object = await registry.call("Echo", "[1, 2]")
    assert not_object.error_code == "INVALID_INPUT" and "object" in not_object.content
    empty = await registry.call("Echo", "  ")
    assert not empty.is_error and empty.content == EMPTY_RESULT  # no arguments = {}


async def test_unknown_tool_lists_offered_tools(registry: Registry) -> None:
    events: list[Event] = []
    executor = Executor(registry, registry.session, emit=events.append)
    out = await executor.run_one(call("Ech0", {}))
    assert out.is_error and out.error_code == "UNKNOWN_TOOL"
    assert "Ech0" in out.content and all(n in out.content for n in registry.names())
    assert [type(e) for e in events] == [ToolStarted, ToolFinished]


async def test_goat_error_becomes_error_text_with_code(registry: Registry) -> None:
    out = await registry.call("Fail", {"text": "the thing"})
    assert out.is_error and out.metadata["error_code"] == "CONFLICT"
    assert out.content == "Error: could not do the thing\npartial output"


async def test_empty_result_gets_a_line(registry: Registry) -> None:
    out = await registry.call("Echo", {"text": ""})
    assert out.content == EMPTY_RESULT and not out.is_error
    spaces = await registry.call("Echo", {"text": " \n "})
    assert spaces.content == EMPTY_RESULT
    picture = await registry.call("Picture", {})
    assert picture.content == "" and len(picture.attachments) == 1


async def test_output_over_the_budget_is_stored_whole_and_shown_head_and_tail(registry: Registry) -> None:
    out = await registry.call("Big", {})
    stored = Path(out.metadata["full_output"])
    assert out.content.startswith("HEAD") and "TAIL\n[output of 10,008 characters" in out.content
    assert f"stored whole at {stored}" in out.content and len(out.content) < 700
    assert stored.read_text() == "HEAD" + "x\n" * 5000 + "TAIL", "nothing lost"
    assert stored.is_relative_to(registry.session.large_outputs_dir)


async def test_title_defaults_to_tool_title(registry: Registry) -> None:
    out = await registry.call("Echo", {"text": "a"})
    assert out.title == "Echo"


async def test_read_only_calls_run_together_at_most_ten(registry: Registry) -> None:
    gate = Gate(MAX_CONCURRENT_READS)
    GatedRead.gate = gate
    executor = Executor(registry, registry.session)
    calls = [call("GatedRead", {"text": str(i)}, f"c{i}") for i in range(15)]
    results = await executor.run_calls(calls)
    assert [r.content for r in results] == [f"read {i}" for i in range(15)]
    assert gate.peak == MAX_CONCURRENT_READS == 10


async def test_mutating_calls_run_one_at_a_time_in_order(tmp_path: Path) -> None:
    activity = Activity()
    registry = Registry(cwd=tmp_path)
    registry.register(SlowRead(activity))
    registry.register(SlowWrite(activity))
    events: list[Event] = []
    executor = Executor(registry, registry.session, emit=events.append)
    plan = [("SlowRead", "r1", 30), ("SlowRead", "r2", 1), ("SlowWrite", "w1", 5), ("SlowWrite", "w2", 1),
            ("SlowRead", "r3", 10), ("SlowRead", "r4", 1)]  # fmt: skip
    calls = [call(name, {"text": text, "count": ms}, text) for name, text, ms in plan]
    results = await executor.run_calls(calls)
    assert [r.content for r in results] == ["r1", "r2", "w1", "w2", "r3", "r4"]
    assert activity.active_during_mutation == [1, 1]  # nothing else ran during a write
    finished = [e.call_id for e in events if isinstance(e, ToolFinished)]
    assert finished == ["r2", "r1", "w1", "w2", "r4", "r3"]  # reads overlapped, writes waited


async def test_events_in_order_per_call(tmp_path: Path) -> None:
    registry = Registry(cwd=tmp_path)
    registry.register(SlowRead(Activity()))
    events: list[Event] = []
    executor = Executor(registry, registry.session, emit=events.append, agent_id="sub1")
    await executor.run_calls([call("SlowRead", {"text": "a"}, "a"), call("SlowRead", {"text": "b"}, "b")])
    for call_id in ("a", "b"):
        mine = [
            e
            for e in events
            if isinstance(e, ToolStarted | ToolProgress | ToolFinished) and e.call_id == call_id
        ]
        assert [type(e) for e in mine] == [ToolStarted, ToolProgress, ToolFinished]
        started, progress, finished = mine
        assert isinstance(started, ToolStarted) and started.args == {"text": call_id}
        assert isinstance(progress, ToolProgress) and progress.title == f"reading {call_id}"
        assert isinstance(finished, ToolFinished) and finished.output.content == call_id
        assert finished.elapsed_s >= 0 and all(e.agent_id == "sub1" for e in mine)


class DenyPolicy(AllowAll):  # AllowAll: no search filtering
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def decide(
        self, tool: Tool[Any], args: ToolInput, ctx: ToolContext, hook: HookOutcome
    ) -> PermissionDecision:
        self.asked.append(tool.name)
        if tool.name == "Echo":
            return PermissionDecision("deny", "Echo is not allowed in this test.")
        return PermissionDecision("allow", updated_input={"text": "rewritten by policy"})


async def test_permission_policy_denies_and_rewrites(tmp_path: Path) -> None:
    registry = Registry(cwd=tmp_path)
    echo = EchoTool()
    registry.register(echo)
    registry.register(SlowRead(Activity()))
    policy = DenyPolicy()
    executor = Executor(registry, registry.session, policy=policy)
    denied = await executor.run_one(call("Echo", {"text": "hi"}))
    assert denied.is_error and denied.error_code == "PERMISSION_DENIED"
    assert "Echo is not allowed in this test." in denied.content and echo.seen == []
    allowed = await executor.run_one(call("SlowRead", {"text": "original", "count": 0}))
    assert allowed.content == "rewritten by policy" and policy.asked == ["Echo", "SlowRead"]


class ScriptedHooks:
    """PreToolUse rewrites or blocks by input text; both hooks add context."""

    def __init__(self) -> None:
        self.post_outputs: list[str] = []

    async def pre_tool_use(self, name: str, args: dict[str, Any], ctx: ToolContext) -> HookOutcome:
        if args.get("text") == "block me":
            return HookOutcome(decision="deny", reason="Blocked by the test hook.")
        if args.get("text") == "make invalid":
            return HookOutcome(updated_input={"text": "x", "count": "lots"})
        return HookOutcome(
            updated_input={**args, "text": args["text"].upper()}, additional_context=["pre note"]
        )

    async def post_tool_use(
        self, name: str, args: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        self.post_outputs.append(output.content)
        return HookOutcome(additional_context=["post note"])


async def test_hooks_update_input_add_context_and_deny(registry: Registry) -> None:
    hooks = ScriptedHooks()
    executor = Executor(registry, registry.session, hooks=hooks)
    out = await executor.run_one(call("Echo", {"text": "quiet"}))
    assert out.content == "QUIET\n\npre note\npost note"
    assert hooks.post_outputs == ["QUIET"]
    blocked = await executor.run_one(call("Echo", {"text": "block me"}))
    assert blocked.error_code == "PERMISSION_DENIED" and "Blocked by the test hook." in blocked.content
    invalid = await executor.run_one(call("Echo", {"text": "make invalid"}))
    assert invalid.error_code == "INVALID_INPUT" and "count" in invalid.content
    echo = registry.get("Echo")
    assert isinstance(echo, EchoTool) and echo.seen == ["QUIET"]


class RecordingPolicy(AllowAll):
    """Allows everything and remembers which calls reached the permission step."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def decide(
        self, tool: Tool[Any], args: ToolInput, ctx: ToolContext, hook: HookOutcome
    ) -> PermissionDecision:
        self.asked.append({"tool": tool.name, **args.model_dump()})
        return PermissionDecision("allow")


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("Edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "b"}, "has not been read"),
        ("Edit", {"file_path": "./sub/../notes.txt", "old_string": "a", "new_string": "b"}, "not been read"),
        ("Edit", {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}, "File not found"),
        ("Edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "a"}, "identical"),
        ("Edit", {"file_path": "nb.ipynb", "old_string": "a", "new_string": "b"}, "use NotebookEdit"),
        ("Edit", {"file_path": "sub", "old_string": "a", "new_string": "b"}, "directory"),
        ("Write", {"file_path": "notes.txt", "content": "x"}, "has not been read"),
        ("Write", {"file_path": "sub", "content": "x"}, "directory"),
        ("NotebookEdit", {"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x"}, "not been read"),
        ("NotebookEdit", {"notebook_path": "notes.txt", "cell_id": "c1", "new_source": "x"}, "not a .ipynb"),
    ],
)
async def test_a_call_that_would_fail_is_not_sent_for_approval(
    tmp_path: Path, name: str, args: dict[str, Any], error: str
) -> None:
    from goat_jupyter.tools import default_registry

    (tmp_path / "notes.txt").write_text("a\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "nb.ipynb").write_text(
        '{"cells": [{"id": "c1", "cell_type": "code", "source": "1", "metadata": {}, "outputs": [],'
        ' "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    registry = default_registry(cwd=str(tmp_path))
    policy = RecordingPolicy()
    output = await Executor(registry, registry.session, policy=policy).run_one(call(name, args))
    assert output.is_error and error in output.content
    assert policy.asked == []
    assert (tmp_path / "notes.txt").read_text() == "a\n"


async def test_a_call_that_passes_the_checks_still_asks_and_then_runs(tmp_path: Path) -> None:
    from goat_jupyter.tools import default_registry

    (tmp_path / "notes.txt").write_text("a\n")
    registry = default_registry(cwd=str(tmp_path))
    policy = RecordingPolicy()
    executor = Executor(registry, registry.session, policy=policy)
    await executor.run_one(call("Read", {"file_path": "notes.txt"}))
    edited = await executor.run_one(
        call("Edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "b"})
    )
    assert not edited.is_error and (tmp_path / "notes.txt").read_text() == "b\n"
    assert [a["tool"] for a in policy.asked] == ["Read", "Edit"]
    # Changed behind the model's back after the read: stale, refused before asking.
    (tmp_path / "notes.txt").write_text("changed by the user, longer\n")
    stale = await executor.run_one(
        call("Edit", {"file_path": "notes.txt", "old_string": "b", "new_string": "c"})
    )
    assert stale.is_error and "modified since" in stale.content and len(policy.asked) == 2
