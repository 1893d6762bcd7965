"""Builds each model request within the window: stable prefix, pruning, compaction, cache markers."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.agent.code_style import action_style_for
from goat_jupyter.agent.compaction import compact
from goat_jupyter.agent.context import (
    Budget,
    budget_for,
    prune_point,
    pruned_view,
    request_tokens,
    tools_tokens,
)
from goat_jupyter.agent.lean import CODE_PROMPT, LEAN_PROMPT, lean_tools, note_block, profile_for
from goat_jupyter.agent.llm import LLMClient, Meter
from goat_jupyter.agent.prompts import BASE_PROMPT, reminder, session_context, system_prompt
from goat_jupyter.agent.session import Message, Session
from goat_jupyter.tools.catalog import ToolCatalog
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.events import EventSink, Notice
from goat_jupyter.tools.offer import loaded_tools, make_offer, offered_tools, unusable_tools

EPHEMERAL = {"type": "ephemeral"}


@dataclass
class Request:
    messages: list[Message]
    tools: list[dict[str, Any]]
    tokens: int


def wants_cache_markers(model: str) -> bool:
    """Claude on Anthropic, Bedrock or Vertex needs explicit cache breakpoints; others cache alone."""
    name = model.lower()
    return name.startswith(("anthropic/", "claude")) or (
        name.startswith(("bedrock/", "vertex_ai/")) and ("claude" in name or "anthropic" in name)
    )


def kilo(tokens: int) -> str:
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k"


def _marked(message: Message) -> Message:
    """A copy of the message whose last content part carries a cache breakpoint."""
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
    if isinstance(content, list) and content:
        parts = copy.deepcopy(cast(list[Any], content))
        if isinstance(parts[-1], dict):
            parts[-1]["cache_control"] = EPHEMERAL
            return {**message, "content": parts}
    return message


def with_cache_markers(
    messages: list[Message], tools: list[dict[str, Any]]
) -> tuple[list[Message], list[dict[str, Any]]]:
    """Breakpoints (at most 4) on the system prompt, the tool list and the two newest turns."""
    marked = list(messages)
    marked[0] = _marked(marked[0])
    placed = 0
    for index in range(len(marked) - 1, 0, -1):
        if placed == 2:
            break
        candidate = _marked(marked[index])
        if candidate is not marked[index]:
            marked[index] = candidate
            placed += 1
    if tools:
        tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    return marked, tools


class ContextKeeper:
    """One per agent run; the state that must outlive a run lives in `session.context`."""

    def __init__(
        self,
        session: Session,
        registry: ToolCatalog,
        services: Services,
        llm: LLMClient,
        emit: EventSink,
        *,
        system: str | None = None,
        summarizer: LLMClient | None = None,
        agent_id: str | None = None,
        meter: Meter,
    ) -> None:
        self.session = session
        self.registry = registry
        self.services = services
        self.llm = llm
        self.emit = emit
        self.system_override = system
        self.summarizer = summarizer or llm
        self.agent_id = agent_id
        self.meter = meter  # the summary is charged to the run like any other request

    def budget(self) -> Budget:
        settings = self.session.settings
        return budget_for(
            self.llm.model,
            settings.context_window,
            settings.max_tokens,
            settings.compact_at,
            settings.keep_recent_tokens,
        )

    def profile(self) -> str:
        """`lean` or `full` (issue 23): the tool set and prompt for this session's model."""
        return profile_for(self.session.settings, self.llm.local, self.budget().window)

    def action_style(self) -> str:
        """`tools` or `code` (issue 34): whether a reply's code blocks are its action."""
        if self.system_override is not None:
            return "tools"  # a subagent's or a compaction's own prompt asks for tool calls
        return action_style_for(self.session.settings, self.profile())

    def lean(self) -> bool:
        """Notes in plain words, inside the results: the lean profile's and code style's form."""
        return self.profile() == "lean" or self.action_style() == "code"

    def _base_prompt(self, profile: str) -> str:
        if self.action_style() == "code":
            return CODE_PROMPT
        return LEAN_PROMPT if profile == "lean" else BASE_PROMPT

    def system(self) -> str:
        if self.system_override is not None:
            return self.system_override
        state = self.session.context
        profile = self.profile()
        style = self.session.settings.output_style
        key = f"{profile} {self.action_style()} {style}"  # `%goat style` takes effect at the next request
        if state.system is None or state.profile != key:
            state.system = system_prompt(self._base_prompt(profile), style)
            state.profile = key
        return state.system

    def preamble(self) -> list[Message]:
        """The workspace's facts and instructions, right after the prefix that caches across sessions
        (a subagent's too: its system prompt names no folder)."""
        state = self.session.context
        if state.preamble is None:
            state.preamble = session_context(self.session)
        return [{"role": "user", "content": note_block(state.preamble, self.lean())}]

    def tools(self) -> list[dict[str, Any]]:
        """The offered tool definitions, rebuilt only when the set of tools, the profile or the tools
        the history loaded change. The lean profile offers its core tools, nothing deferred."""
        state = self.session.context
        if self.action_style() == "code":
            return []  # the model acts by writing code: no definitions to misread or to pay for
        hidden = unusable_tools(self.services)
        profile = self.profile()
        loaded = loaded_tools(self.session.messages) if profile == "full" else []
        budget = self.session.settings.mcp_tools_budget
        names = (name for name in self.registry.names() if name not in hidden)
        key = (profile, str(budget), *names, "|", *loaded)
        if state.tools is None or state.tools_key != key:
            if profile == "lean":
                state.tools = lean_tools(offered_tools(self.registry, hidden))
            else:
                state.tools = make_offer(self.registry, hidden, loaded, budget, tools_tokens).sent
            state.tools_key = key
        return state.tools

    def remind_after_last(self) -> None:
        """Note the reminder (cwd, date, mode) after the newest message when it changed."""
        state = self.session.context
        text = reminder(self.session)
        if text != state.last_reminder and self.session.messages:
            state.last_reminder = text
            state.reminders[len(self.session.messages) - 1] = text

    def _with_reminders(self, view: list[Message]) -> list[Message]:
        reminders = self.session.context.reminders
        if not reminders:
            return view
        lean = self.lean()
        out: list[Message] = []
        for index, message in enumerate(view):
            if index in reminders and lean and self._carries_notes(message):
                note = note_block(reminders[index], lean)  # inside the result: a small model answers notes
                out.append({**message, "content": f"{message.get('content')}\n\n{note}"})
                continue
            out.append(message)
            if index in reminders:
                out.append({"role": "user", "content": note_block(reminders[index], lean)})
        return out

    def _carries_notes(self, message: Message) -> bool:
        """A lean note rides in a tool result, and in code style in a text message of the user's
        side (the code's results); an image message keeps its parts."""
        role = message.get("role")
        if role == "user" and self.action_style() == "code":
            return isinstance(message.get("content"), str)
        return role == "tool"

    def request(self) -> Request:
        view = pruned_view(self.session.messages, self.session.context.prune_upto)
        messages: list[Message] = [
            {"role": "system", "content": self.system()},
            *self.preamble(),
            *self._with_reminders(view),
        ]
        tools = self.tools()
        tokens = request_tokens(messages, tools)
        if self.session.settings.prompt_caching and wants_cache_markers(self.llm.model):
            messages, tools = with_cache_markers(messages, tools)
        return Request(messages, tools, tokens)

    async def fit(self) -> Request:
        """The next request, pruned and if need be compacted to stay under the threshold."""
        budget = self.budget()
        request = self.request()
        if request.tokens > budget.threshold:
            self._prune(prune_point(self.session.messages, budget.keep_recent))
            request = self.request()
        if request.tokens > budget.threshold:
            await self.compact(before=request.tokens)
            request = self.request()
        if request.tokens > budget.threshold:  # one huge recent turn: prune all but the newest group
            self._prune(len(self.session.messages) - 1)
            request = self.request()
        self._note(request.tokens)
        return request

    def _prune(self, upto: int) -> None:
        state = self.session.context
        state.prune_upto = max(state.prune_upto, upto)

    def _note(self, tokens: int) -> None:
        state = self.session.context
        state.last_request_tokens = tokens
        state.peak_request_tokens = max(state.peak_request_tokens, tokens)

    async def compact(
        self, focus: str = "", before: int | None = None, keep_tokens: int | None = None
    ) -> bool:
        """Summarise the older turns; one line in the cell says what it saved. False: nothing to do."""
        budget = self.budget()
        before = self.request().tokens if before is None else before
        self.emit(Notice("Compacting the conversation…", "info", self.agent_id))
        result = await compact(
            self.session.messages,
            self.summarizer,
            meter=self.meter,
            keep_tokens=budget.keep_recent if keep_tokens is None else keep_tokens,
            summarizer_budget=budget.usable // 2,
            focus=focus,
        )
        if result is None:
            return False
        self.session.compacted(result.messages, result.summary, result.kept)
        after = self.request().tokens
        self.session.record("compacted", before_tokens=before, after_tokens=after)
        self.emit(Notice(f"context compacted: {kilo(before)} → {kilo(after)} tokens", "info", self.agent_id))
        return True
