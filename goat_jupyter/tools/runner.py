"""The executor: the one place for lookup, validation, hooks, permissions, bounding and errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from goat_jupyter.config.managed import load_managed
from goat_jupyter.errors import (
    DeclinedError,
    GoatError,
    InvalidInputError,
    PermissionDeniedError,
    ToolExecutionError,
    UnknownToolError,
    UserDeniedError,
)
from goat_jupyter.processes.spawn import OutputBuffer
from goat_jupyter.represent import spill
from goat_jupyter.text import JsonTooDeepError, cut_middle, loads_json
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.decisions import AllowAll as AllowAll
from goat_jupyter.tools.decisions import HookOutcome as HookOutcome
from goat_jupyter.tools.decisions import Hooks as Hooks
from goat_jupyter.tools.decisions import NoHooks as NoHooks
from goat_jupyter.tools.decisions import PermissionDecision as PermissionDecision
from goat_jupyter.tools.decisions import PermissionPolicy as PermissionPolicy
from goat_jupyter.tools.events import EventSink, Notice, ToolFinished, ToolProgress, ToolStarted, drop_event
from goat_jupyter.tools.redaction import CleanSink, clean_output

if TYPE_CHECKING:
    from goat_jupyter.state import SessionState
    from goat_jupyter.tools.catalog import ToolCatalog

MAX_CONCURRENT_READS = 10
EMPTY_RESULT = "(Tool completed with no output)"
PARTIAL_OUTPUT_CHARS = 8_000  # the budget of an interrupted call's result; the rest is stored whole


@dataclass
class ToolCall:
    """One call as the model made it; `arguments` may still be the raw JSON text."""

    id: str
    name: str
    arguments: dict[str, Any] | str


def error_output(exc: GoatError, *, title: str = "") -> ToolOutput:
    """The single boundary where typed errors become `Error: ...` text."""
    text = f"Error: {exc.message}"
    if exc.output:
        text += f"\n{exc.output}"
    output = ToolOutput(text, is_error=True, title=title, metadata={"error_code": exc.code})
    if isinstance(exc, DeclinedError):
        output.metadata["declined"] = True
    if isinstance(exc, UserDeniedError):  # one record per decision: the approval's, in the user's words
        output.metadata["denied_by"] = "user"
        output.summary, output.display = "denied by the user", ""
    return output


def unexpected_error(tool_name: str, exc: Exception) -> ToolExecutionError:
    """A bug or a hostile input that broke handling the call: the call did not run (or not fully)."""
    return ToolExecutionError(
        f"Handling this {tool_name} call failed unexpectedly ({type(exc).__name__}: {exc}); "
        "it may not have completed. Check the arguments before retrying."
    )


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    problems: list[str] = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(input)"
        if err["type"] == "extra_forbidden":
            problems.append(f"{where}: unexpected field")
        elif err["type"] == "missing":
            problems.append(f"{where}: required field is missing")
        else:
            problems.append(f"{where}: {err['msg']} (got {err.get('input')!r:.80})")
    return (
        f"Invalid input for {tool_name}: "
        + "; ".join(problems)
        + ". Fix the arguments and call the tool again."
    )


def parse_arguments(raw: dict[str, Any] | str) -> dict[str, Any]:
    """The call's arguments as an object (the model's arguments were cleaned where they entered:
    agent/turns.py, agent/text_calls.py)."""
    if isinstance(raw, dict):
        return raw
    if not raw.strip():
        return {}
    try:
        value = loads_json(raw, "The tool arguments")
    except JsonTooDeepError as exc:
        raise InvalidInputError(f"{exc.message} Send flatter arguments and call again.") from None
    except ValueError as exc:
        raise InvalidInputError(
            f"The tool arguments are not valid JSON ({exc}). Send a JSON object and call again."
        ) from None
    if not isinstance(value, dict):
        raise InvalidInputError("The tool arguments must be a JSON object. Call again with an object.")
    return value  # pyright: ignore[reportUnknownVariableType]


def interrupted_output(partial: str, elapsed_s: float, session: SessionState) -> ToolOutput:
    """The result of a call the user stopped: that it was interrupted, plus the output shown so far
    (stored whole when large, like any result)."""
    text = f"Error: interrupted by the user after {elapsed_s:.1f} s, before this tool finished."
    if partial.strip():
        text += f"\nOutput the user saw before the interrupt:\n{partial}"
    result = ToolOutput(text, is_error=True, metadata={"error_code": "interrupted"})
    return _spilled(result, session, PARTIAL_OUTPUT_CHARS)


def normalise(output: ToolOutput | str, tool: Tool[Any], session: SessionState) -> ToolOutput:
    """The one bounding step, errors included: empty results say so; a result over the budget is
    stored whole under the session folder and the model gets its ends and the path (Read, the pager
    itself, is exempt)."""
    result = output if isinstance(output, ToolOutput) else ToolOutput(output)
    if not result.content.strip() and not result.attachments:
        result.content = EMPTY_RESULT
    if tool.spills:
        result = _spilled(result, session, min(session.settings.large_output_chars, tool.max_output_chars))
        if (
            "full_output" in result.metadata
        ):  # the excerpt and its note are the bound: cutting more loses the path
            return result
    result.content = cut_middle(result.content, tool.max_output_chars)
    return result


def _spilled(result: ToolOutput, session: SessionState, budget: int) -> ToolOutput:
    spilled = spill(result.content, session.large_outputs_dir, budget)
    result.content = spilled.text
    if spilled.path is not None:
        result.metadata["full_output"] = str(spilled.path)
    return result


class Executor:
    """Runs the model's tool calls against a registry for one session."""

    def __init__(
        self,
        registry: ToolCatalog,
        session: SessionState,
        *,
        policy: PermissionPolicy | None = None,
        hooks: Hooks | None = None,
        emit: EventSink = drop_event,
        services: Services | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.registry = registry
        self.session = session
        self.policy: PermissionPolicy = policy or AllowAll()
        self.hooks: Hooks = hooks or NoHooks()
        self.emit: EventSink = emit if isinstance(emit, CleanSink) else CleanSink(emit)  # what the user sees
        self.services = services if services is not None else Services()
        self.agent_id = agent_id
        # Each call's result once settled (finished, or stopped with its partial output), so an
        # interrupted turn keeps what really happened; streamed output per running call.
        self.settled: dict[str, ToolOutput] = {}
        self._partial: dict[str, OutputBuffer] = {}  # what each running call showed the user
        self._waited: dict[str, float] = {}  # time in the permission step (the user deciding)

    def read_deny_checker(self, session: SessionState) -> Callable[[Path], str | None] | None:
        return self.policy.read_deny_checker(session)

    def allowed_names(self) -> tuple[str, ...]:
        return self.registry.allowed_names()

    async def run_calls(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        """Consecutive concurrency-safe calls run together (max 10); results keep the model's order."""
        results: list[ToolOutput] = []
        index = 0
        while index < len(calls):
            batch = [calls[index]]
            if self._is_concurrent(calls[index]):
                while index + len(batch) < len(calls) and self._is_concurrent(calls[index + len(batch)]):
                    batch.append(calls[index + len(batch)])
            if len(batch) == 1:
                results.append(await self.run_one(batch[0]))
            else:
                results.extend(await self._run_concurrently(batch))
            index += len(batch)
        return results

    async def _run_concurrently(self, batch: list[ToolCall]) -> list[ToolOutput]:
        gate = asyncio.Semaphore(MAX_CONCURRENT_READS)

        async def gated(call: ToolCall) -> ToolOutput:
            async with gate:
                return await self.run_one(call)

        return list(await asyncio.gather(*(gated(c) for c in batch)))

    def _is_concurrent(self, call: ToolCall) -> bool:
        tool = self.registry.get(call.name)
        return tool is not None and tool.concurrency_safe

    async def run_one(self, call: ToolCall) -> ToolOutput:
        started = time.perf_counter()
        try:
            output = await self._run_one(call, started)
        except asyncio.CancelledError:
            partial = self._partial.pop(call.id, OutputBuffer()).described()
            self.settled[call.id] = clean_output(
                interrupted_output(partial, time.perf_counter() - started, self.session)
            )
            raise
        self._partial.pop(call.id, None)
        self.settled[call.id] = output
        return output

    async def _run_one(self, call: ToolCall, started: float) -> ToolOutput:
        tool = self.registry.get(call.name)
        title = call.name
        args: dict[str, Any] = {}
        announced = False
        try:
            if tool is None:
                raise UnknownToolError(self._unknown_tool_message(call.name))
            if (policy := load_managed()).tool_disabled(tool.name):
                raise PermissionDeniedError(f"{tool.name} is disabled by {policy.reason}.")
            args = parse_arguments(call.arguments)
            parsed = self._validate(tool, args)
            title = tool.title_for(parsed)
            self.emit(ToolStarted(call.id, tool.name, title, args, self.agent_id))
            announced = True
            output = await self._run_checked(tool, parsed, args, call)
        except GoatError as exc:
            output = error_output(exc, title=title)
            if tool is None or not args:
                self.emit(ToolStarted(call.id, call.name, title, args, self.agent_id))
        except Exception as exc:  # nothing the model sends may end the run (hooks, policy, checkpoints)
            output = error_output(unexpected_error(call.name, exc), title=title)
            if not announced:
                self.emit(ToolStarted(call.id, call.name, title, args, self.agent_id))
        output.title = output.title or title
        output = clean_output(output)  # the one place every result passes: no key reaches the model
        elapsed = time.perf_counter() - started
        waited = self._waited.pop(call.id, 0.0)
        self.emit(ToolFinished(call.id, call.name, output, elapsed, self.agent_id, waited_s=waited))
        return output

    def _validate(self, tool: Tool[Any], args: dict[str, Any]) -> ToolInput:
        try:
            return tool.input_model.model_validate(args)
        except ValidationError as exc:
            raise InvalidInputError(describe_validation_error(tool.name, exc)) from None

    async def _run_checked(
        self, tool: Tool[Any], parsed: ToolInput, args: dict[str, Any], call: ToolCall
    ) -> ToolOutput:
        ctx = self._context(call)
        hook = await self.hooks.pre_tool_use(tool.name, args, ctx)
        self._notify(hook.notices)
        if hook.updated_input is not None:
            args = hook.updated_input
            parsed = self._validate(tool, args)
        await tool.precheck(parsed, ctx)  # a call that would fail fails here, without asking anyone
        asked = time.perf_counter()
        decision = await self.policy.decide(tool, parsed, ctx, hook)
        self._waited[call.id] = time.perf_counter() - asked
        if decision.behavior != "allow":
            denied = UserDeniedError if decision.by_user else PermissionDeniedError
            raise denied(decision.message or f"Permission to use {tool.name} was denied.")
        if decision.updated_input is not None:
            args = decision.updated_input
            parsed = self._validate(tool, args)
        checkpoints = self.services.checkpoints  # before-images for "Revert this run"
        pending = await checkpoints.before_tool(tool, parsed, ctx) if checkpoints is not None else None
        try:
            raw: ToolOutput | str = await tool.run(parsed, ctx)
        except GoatError as exc:  # an error's output (a failed command's) is bounded like a result
            raw = error_output(exc)
        except Exception as exc:  # a bug in one tool must not end the run: the model sees it
            raw = error_output(
                ToolExecutionError(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}")
            )
        output = normalise(raw, tool, ctx.session)
        if checkpoints is not None:
            await checkpoints.after_tool(pending, output)
        after = await self.hooks.post_tool_use(tool.name, args, output, ctx)
        self._notify(after.notices)
        extra = [*hook.additional_context, *after.additional_context]
        if after.decision == "deny" and after.reason:
            extra.append(after.reason)
        if extra:
            output.content += "\n\n" + "\n".join(extra)
        return output

    def _notify(self, notices: list[str]) -> None:
        for text in notices:
            self.emit(Notice(text, "warning", self.agent_id))

    def _context(self, call: ToolCall) -> ToolContext:
        def progress(*, title: str | None = None, output: str | None = None) -> None:
            if output:
                self._partial.setdefault(call.id, OutputBuffer()).append(output)
            self.emit(ToolProgress(call.id, title, output, self.agent_id))

        return ToolContext(self.session, call.id, progress, self.services, executor=self)

    def _unknown_tool_message(self, name: str) -> str:
        offered = ", ".join(t.name for t in self.registry.tools() if not t.hidden)
        return f"There is no tool named '{name}'. Available tools: {offered}."
