"""The agent loop: model turn, tool calls through the executor, repeat. No IPython imports."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from goat_jupyter.agent.code_style import (
    FIX_NOTE,
    FIX_NOTES,
    FIXABLE,
    CodeBlock,
    CodeResults,
    CodeRunner,
    code_blocks,
    first_look,
    held_back,
    up_to_last_block,
)
from goat_jupyter.agent.context_keeper import ContextKeeper, Request
from goat_jupyter.agent.lean import note_block
from goat_jupyter.agent.litellm_loader import litellm_loaded, litellm_module
from goat_jupyter.agent.llm import LLMClient, PromptInfo
from goat_jupyter.agent.meter import Meter
from goat_jupyter.agent.session import Message, Session, as_list
from goat_jupyter.agent.spend import BudgetReachedError, Limits, RunSpend, live_budget
from goat_jupyter.agent.text_calls import FORMAT_REMINDER, recover_call
from goat_jupyter.agent.turns import AssistantTurn, ToolCallRequest, Usage
from goat_jupyter.errors import ContextLengthError
from goat_jupyter.tools.base import ToolOutput
from goat_jupyter.tools.catalog import ToolCatalog
from goat_jupyter.tools.events import (
    Activity,
    EventSink,
    Notice,
    RunFinished,
    TextDelta,
    TextRetracted,
    TurnUsage,
)
from goat_jupyter.tools.redaction import CleanSink
from goat_jupyter.tools.runner import Executor, ToolCall


@dataclass
class RunResult:
    text: str
    turns: int
    usage: Usage
    stop_reason: str
    elapsed_s: float


def assistant_message(turn: AssistantTurn) -> Message:
    message: Message = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
            for c in turn.tool_calls
        ]
    return message


def make_call_ids_unique(turn: AssistantTurn) -> None:
    """A model may repeat (or leave out) a tool-call id; every result must answer exactly one call."""
    seen: set[str] = set()
    for call in turn.tool_calls:
        base, number = call.id or "call", 1
        while not call.id or call.id in seen:
            number += 1
            call.id = f"{base}_{number}"
        seen.add(call.id)


def tool_message(call_id: str, output: ToolOutput) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": output.content}


def image_message(outputs: list[ToolOutput]) -> Message | None:
    """Tool messages carry text only, so images from tools follow as one user message."""
    parts: list[dict[str, Any]] = []
    for output in outputs:
        for attachment in output.attachments:
            if attachment.mime_type.startswith("image/"):
                url = f"data:{attachment.mime_type};base64,{attachment.data}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
    if not parts:
        return None
    return {
        "role": "user",
        "content": [{"type": "text", "text": "Images returned by the tools above:"}, *parts],
    }


class Agent:
    """Runs one prompt to completion against a session, emitting events as it goes."""

    def __init__(
        self,
        session: Session,
        registry: ToolCatalog,
        executor: Executor,
        llm: LLMClient,
        emit: EventSink,
        *,
        max_turns: int = 50,
        agent_id: str | None = None,
        system: str | None = None,
        persist_tool_use: bool = True,
        notices: Callable[[], list[str]] | None = None,
        summarizer: LLMClient | None = None,
        spend: RunSpend | None = None,
    ) -> None:
        self.session = session
        # A subagent spends from its parent's run: the parent passes its RunSpend.
        self.spend = spend or session.new_run_spend()
        if agent_id is None:
            session.run_spend = self.spend
        self.meter = Meter(self.spend, lambda: Limits.of(self.session.settings), self._warn)
        self.registry = registry
        self.executor = executor
        self.llm = llm
        self.emit: EventSink = emit if isinstance(emit, CleanSink) else CleanSink(emit)  # keys redacted
        self.max_turns = max_turns
        self.agent_id = agent_id
        self.system = system
        self.persist_tool_use = persist_tool_use
        # Where pending notices for the next turn come from (default: finished background tasks);
        # subagents pass their own (a team member's inbox) so they never take the parent's notices.
        self.notices = notices
        self._format_note = False  # a text call was recovered: its result says which format to use
        self._prompt = ""
        self._blocks: list[CodeBlock] = []  # code style: the last reply's blocks, to run as its action
        self._fix_owed = False  # code style: the last block failed as code (not a denial)
        self._fix_notes = 0  # notes asking for a fix, this run
        self.context = ContextKeeper(
            session,
            registry,
            executor.services,
            llm,
            self.emit,
            system=system,
            summarizer=summarizer,
            agent_id=agent_id,
            meter=self.meter,
        )

    def _warn(self, text: str) -> None:
        self.emit(Notice(text, "warning", self.agent_id))

    async def run(self, prompt: str) -> RunResult:
        started = time.perf_counter()
        usage = Usage()
        turns = 0
        stop_reason = "end_turn"
        final_text = ""
        self._prompt = prompt
        self._fix_owed, self._fix_notes = False, 0
        try:
            look = await self._first_look()
            self.session.append({"role": "user", "content": self._with_notices(prompt, look)})
            self._remind()
            while True:
                if turns >= self.max_turns:
                    stop_reason = "max_turns"
                    self.emit(Notice(f"Stopped after {turns} turns (max_turns).", "warning", self.agent_id))
                    break
                try:
                    turn = await self._model_turn()
                except BudgetReachedError as stop:
                    stop_reason = "budget"
                    self.emit(Notice(str(stop), "warning", self.agent_id))
                    break
                turns += 1
                usage.add(turn.usage)
                final_text = turn.text
                if not turn.tool_calls:
                    if not self._blocks:
                        if self._owes_fix():
                            continue
                        break
                    await self._run_code(self._blocks)
                    continue
                await self._run_tools(turn)
        except asyncio.CancelledError:
            stop_reason = "interrupted"
            self._on_interrupt()
            raise
        except Exception:
            stop_reason = "error"
            self.session.repair()
            raise
        finally:
            elapsed = time.perf_counter() - started
            self.emit(
                RunFinished(
                    turns,
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.cost_usd,
                    elapsed,
                    stop_reason,
                    {"agent_id": self.agent_id, "cached_tokens": usage.cached_tokens},
                )
            )
            self.session.record("run", stop_reason=stop_reason, turns=turns)
        return RunResult(final_text, turns, usage, stop_reason, time.perf_counter() - started)

    def _drain_notices(self) -> list[str]:
        if self.notices is not None:
            return self.notices()
        return self.session.tasks.drain_notices() + self.session.drain_notes()

    def _remind(self) -> None:
        """cwd, date and mode, when they changed, follow the newest message (not the cached prefix)."""
        if self.system is None:
            self.context.remind_after_last()

    async def _first_look(self) -> str:
        """Code style: the notebook, files and variables, shown before the model's first reply."""
        if self.agent_id is not None or self.session.settings.action_style == "tools":
            return ""
        await self._model_library()  # `auto` needs the model's window, which litellm knows
        if self.context.action_style() != "code":
            return ""
        runner = CodeRunner(self.executor, self.session, self.session.turns, prefix="look")
        return await first_look(runner, self.executor.services, self.session.cwd, self._prompt)

    def _with_notices(self, prompt: str, look: str = "") -> str:
        notices = [*self._drain_notices(), *([look] if look else [])]
        if not notices:
            return prompt
        return note_block("\n".join(notices), self.context.lean()) + "\n\n" + prompt

    async def _model_library(self) -> None:
        """litellm, imported off this thread; a missing key is said before anything slow."""
        self.llm.check_key()
        if not litellm_loaded():  # the first cell right after %load_ext
            self.emit(Activity("Starting the model client (first run in this kernel)", self.agent_id))
            await litellm_module()

    async def _model_turn(self) -> AssistantTurn:
        def on_text(text: str) -> None:
            self.emit(TextDelta(text, self.agent_id))

        def on_retry(message: str) -> None:
            self.emit(Notice(f"Model request failed: {message}", "warning", self.agent_id))

        await self._model_library()

        def on_stall(message: str) -> None:
            self.emit(Notice(message, "warning", self.agent_id))

        def on_discard(chars: int) -> None:
            self.emit(TextRetracted(chars, self.agent_id))

        request = await self.context.fit()
        try:
            turn = await self._send(request, on_text, on_retry, on_stall, on_discard)
        except ContextLengthError:
            # The provider counts differently from us: compact once and try again.
            self.emit(
                Notice(
                    "The model reported the request as too long for its context.", "warning", self.agent_id
                )
            )
            if not await self.context.compact(before=request.tokens):
                raise
            turn = await self._send(await self.context.fit(), on_text, on_retry, on_stall, on_discard)
        self._recover_text_call(turn, request)
        self._take_code(turn)
        self.session.append(assistant_message(turn))
        self.session.turns += 1
        self.session.usage.add(turn.usage)
        self.session.record(
            "usage",
            prompt_tokens=turn.usage.prompt_tokens,
            completion_tokens=turn.usage.completion_tokens,
            cost_usd=turn.usage.cost_usd,
            cached_tokens=turn.usage.cached_tokens,
            cache_write_tokens=turn.usage.cache_write_tokens,
            request_tokens=self.session.context.last_request_tokens,
        )
        self.emit(
            TurnUsage(
                self.session.turns,
                turn.usage.prompt_tokens,
                turn.usage.completion_tokens,
                turn.usage.cost_usd,
                self.agent_id,
                cached_tokens=turn.usage.cached_tokens,
                budget=live_budget(Limits.of(self.session.settings), self.spend),
            )
        )
        return turn

    async def _send(
        self,
        request: Request,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None],
        on_stall: Callable[[str], None],
        on_discard: Callable[[int], None],
    ) -> AssistantTurn:
        def on_status(message: str) -> None:
            self.emit(Notice(message, "info", self.agent_id))

        turn = await self.llm.complete(
            request.messages,
            request.tools,
            on_text,
            on_retry,
            on_stall,
            meter=self.meter,
            on_discard=on_discard,
            prompt=PromptInfo(request.tokens, on_status),
        )
        make_call_ids_unique(turn)
        return turn

    def _recover_text_call(self, turn: AssistantTurn, request: Request) -> None:
        """A reply that is one tool call written as text runs as that call (issue 23)."""
        if turn.tool_calls or not self.session.settings.text_tool_calls:
            return
        offered = {tool["function"]["name"] for tool in request.tools}
        call = recover_call(turn.text, offered)
        if call is None:
            return
        turn.tool_calls = [ToolCallRequest(f"text_call_{self.session.turns + 1}", call.name, call.arguments)]
        turn.text = ""  # the history shows a real call, the form the model should use next time
        self.emit(
            Notice(
                f"The model wrote a {call.name} call as text; running it as a tool call.",
                "info",
                self.agent_id,
            )
        )
        self._format_note = True

    async def _run_tools(self, turn: AssistantTurn) -> None:
        calls = [ToolCall(c.id, c.name, c.arguments) for c in turn.tool_calls]
        outputs = await self.executor.run_calls(calls)
        notices, lean = self._drain_notices(), self.context.lean()
        if self._format_note:  # in the result, where the model looks next: a separate note got answered
            notices, self._format_note = [*notices, FORMAT_REMINDER], False
        results = [tool_message(call.id, output) for call, output in zip(calls, outputs, strict=True)]
        if notices and (lean or FORMAT_REMINDER in notices):  # a small model answers a separate note
            note = note_block("\n".join(notices), lean)
            results[-1] = {**results[-1], "content": f"{results[-1]['content']}\n\n{note}"}
            notices = []
        for result in results:
            self.session.append(result)
        images = image_message(outputs)
        if images is not None:
            self.session.append(images)
        self._remind()
        if notices:
            self.session.append({"role": "user", "content": note_block("\n".join(notices), lean)})

    def _take_code(self, turn: AssistantTurn) -> None:
        """Code style (issue 34): a reply without tool calls whose blocks run is an action; what it
        wrote after its last block (an output it invented) is taken back, from the cell too."""
        self._blocks = []
        if turn.tool_calls or self.agent_id is not None or self.context.action_style() != "code":
            return
        blocks = code_blocks(turn.text, self._prompt)
        if not blocks:
            return
        if (why := held_back(self._prompt, self.session.settings)) is not None:
            self.emit(Notice(f"The code in the reply was not run: {why}.", "info", self.agent_id))
            return
        kept = up_to_last_block(turn.text, blocks)
        if len(kept) < len(turn.text.rstrip()):
            self.emit(TextRetracted(len(turn.text) - len(kept), self.agent_id))
            turn.text = kept
        self._blocks = blocks

    async def _run_code(self, blocks: list[CodeBlock]) -> None:
        """Run the blocks through the executor; their results follow the reply as one message."""
        results = CodeResults()
        try:
            await CodeRunner(self.executor, self.session, self.session.turns).run(blocks, results)
        except asyncio.CancelledError:
            results.parts.append("Interrupted by the user before the code finished.")
            raise
        finally:
            self._append_code_results(results)

    def _owes_fix(self) -> bool:
        """Code style: a reply that explains a failed block instead of fixing it (the small model's
        habit) gets a note asking for the fix, FIX_NOTES times a run at most."""
        if not self._fix_owed or self._fix_notes >= FIX_NOTES:
            return False
        self._fix_owed = False
        self._fix_notes += 1
        self.session.append({"role": "user", "content": note_block(FIX_NOTE, True)})
        return True

    def _append_code_results(self, results: CodeResults) -> None:
        """The blocks' results as one message after the reply, goat's notes inside it (a small model
        answers a separate note instead of going on)."""
        self.session.record("code_actions", calls=results.calls)  # the session log names what ran
        last = results.outputs[-1] if results.outputs else None
        self._fix_owed = last is not None and last.is_error and last.error_code in FIXABLE
        text = results.text() or "(no block ran)"
        if notices := self._drain_notices():
            text += "\n\n" + note_block("\n".join(notices), True)
        self.session.append({"role": "user", "content": text})
        images = image_message(results.outputs)
        if images is not None:
            self.session.append(images)
        self._remind()

    def _on_interrupt(self) -> None:
        last: Message = self.session.messages[-1] if self.session.messages else {}
        for call in as_list(last.get("tool_calls")):  # what each call did, or the output it showed so far
            settled = self.executor.settled.get(call["id"])
            if settled is not None:
                self.session.append(tool_message(call["id"], settled))
        repaired = self.session.repair()
        self.session.record("interrupted", repaired_tool_results=repaired)
        if self.agent_id is not None:  # the top-level cell says it once, in its last line
            self.emit(Notice("Interrupted.", "warning", self.agent_id))
