"""SubagentRunner: the Agent tool's runtime, nested agent loops with their own history."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from goat_jupyter.agent.llm import LLMClient
from goat_jupyter.agent.loop import Agent, RunResult
from goat_jupyter.agent.session import Session
from goat_jupyter.errors import ConflictError, InvalidInputError
from goat_jupyter.processes.tasks import BackgroundTask
from goat_jupyter.settings import PermissionMode, Settings
from goat_jupyter.state import SessionState
from goat_jupyter.subagents.types import (
    SubagentType,
    checked_mode,
    resolve_model,
    subagent_system_prompt,
    subagent_type,
    tools_for,
)
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.agents.agent import AgentInput
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.tools.events import Event, EventSink, RunFinished, SubagentStarted, ToolFinished, drop_event
from goat_jupyter.tools.runner import Executor

LLMFactory = Callable[[Settings], LLMClient]
Notices = Callable[[], list[str]]


def child_session(parent: SessionState, agent_id: str) -> Session:
    """Own messages and todos; the parent's settings, file-read records, background tasks and session rules."""
    return Session(
        workspace=parent.workspace,
        cwd=parent.cwd,
        session_id=f"{parent.session_id}-{agent_id}",
        settings=parent.settings,
        file_reads=parent.file_reads,
        tasks=parent.tasks,
        notebook_path=parent.notebook_path,
        session_rules=parent.session_rules,
        persist=False,
    )


@dataclass
class Subagent:
    """A subagent kept by id, so `resume` can continue it with its history."""

    id: str
    kind: SubagentType
    model: str
    description: str
    session: Session
    mode: PermissionMode | None = None
    note: str = ""  # extra system-prompt text (a team member's role)
    task_id: str | None = None
    running: bool = False


class ChildEvents:
    """Forwards a subagent's events to the parent's sink and counts its tool calls.

    Its RunFinished is dropped: the parent's Agent card reports the subagent's totals instead.
    """

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.tool_calls = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolFinished):
            self.tool_calls += 1
        if not isinstance(event, RunFinished):
            self.sink(event)


@dataclass
class Outcome:
    agent: Subagent
    result: RunResult
    tool_calls: int

    @property
    def duration_ms(self) -> int:
        return round(self.result.elapsed_s * 1000)

    def report(self) -> str:
        """The subagent's final text, then its id and usage: all the parent model gets back."""
        result = self.result
        text = result.text.strip() or "(The subagent finished without a final answer.)"
        if result.stop_reason == "max_turns":
            text += f"\n\n(The subagent stopped at its limit of {result.turns} turns; resume it to go on.)"
        usage = result.usage
        return (
            f"{text}\n\nagent_id: {self.agent.id} (pass it as `resume` to continue this subagent)\n"
            f"<usage>total_tokens: {usage.prompt_tokens + usage.completion_tokens}\n"
            f"prompt_tokens: {usage.prompt_tokens}\ncompletion_tokens: {usage.completion_tokens}\n"
            f"tool_uses: {self.tool_calls}\nduration_ms: {self.duration_ms}</usage>"
        )

    def metadata(self) -> dict[str, Any]:
        usage = self.result.usage
        return {
            "agent_id": self.agent.id,
            "subagent_type": self.agent.kind.name,
            "model": self.agent.model,
            "turns": self.result.turns,
            "stop_reason": self.result.stop_reason,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "cost_usd": usage.cost_usd,
            "tool_calls": self.tool_calls,
            "duration_ms": self.duration_ms,
        }


def _no_notices() -> list[str]:
    return []


def _parent_executor(ctx: ToolContext) -> Executor:
    if isinstance(ctx.executor, Executor):
        return ctx.executor
    return Executor(default_registry(session=ctx.session), ctx.session, services=ctx.services)


class SubagentRunner:
    """Starts, runs, backgrounds and resumes subagents; `services.subagents` in a runtime."""

    def __init__(self, llm_for: LLMFactory) -> None:
        self.llm_for = llm_for
        self.agents: dict[str, Subagent] = {}
        self._ids = itertools.count(1)

    async def run_agent(self, args: AgentInput, ctx: ToolContext) -> ToolOutput:
        """The Agent tool: a new or resumed subagent, in the foreground or as a background task."""
        if args.team_name:
            teams = required(ctx.services.teams, "teams", "Agent")
            return await teams.add_member(args, ctx)
        if args.resume:
            agent = self.resumable(args.resume, ctx, model=args.model, mode=args.mode)
        else:
            agent = self.create(args.subagent_type, args.description, ctx, model=args.model, mode=args.mode)
        if args.run_in_background:
            return self.start_background(agent, args.prompt, ctx, max_turns=args.max_turns)
        outcome = await self.run(
            agent, args.prompt, ctx, max_turns=args.max_turns, emit=_parent_executor(ctx).emit
        )
        return ToolOutput(outcome.report(), metadata=outcome.metadata())

    def create(
        self,
        type_name: str,
        description: str,
        ctx: ToolContext,
        *,
        model: str | None = None,
        mode: str | None = None,
        note: str = "",
    ) -> Subagent:
        kind = subagent_type(type_name)
        settings = ctx.session.settings
        agent_id = f"{kind.name.lower()}-{next(self._ids)}"  # e.g. explore-1, readable in the cell
        agent = Subagent(
            agent_id,
            kind,
            resolve_model(model, settings),
            description,
            child_session(ctx.session, agent_id),
            checked_mode(mode, settings),
            note,
        )
        self.agents[agent_id] = agent
        return agent

    def find(self, ref: str) -> Subagent:
        """A subagent by its id or by the id of the background task it ran as."""
        agent = self.agents.get(ref) or next((a for a in self.agents.values() if a.task_id == ref), None)
        if agent is None:
            known = ", ".join(f"{a.id} ({a.description})" for a in self.agents.values()) or "none yet"
            raise InvalidInputError(f"No subagent with id '{ref}' to resume. Known subagents: {known}.")
        return agent

    def resumable(self, ref: str, ctx: ToolContext, *, model: str | None, mode: str | None) -> Subagent:
        agent = self.find(ref)
        if agent.running:
            raise ConflictError(
                f"Subagent {agent.id} is still running (task {agent.task_id}); wait for its notice, "
                "then resume it."
            )
        if model:
            agent.model = resolve_model(model, ctx.session.settings)
        if mode:
            agent.mode = checked_mode(mode, ctx.session.settings)
        return agent

    async def run(
        self,
        agent: Subagent,
        prompt: str,
        ctx: ToolContext,
        *,
        max_turns: int | None = None,
        emit: EventSink = drop_event,
        notices: Notices = _no_notices,
    ) -> Outcome:
        """One run of the subagent's loop on its own history, under the parent's policy and hooks."""
        events = ChildEvents(emit)
        if ctx.tool_call_id:
            events(SubagentStarted(ctx.tool_call_id, agent.id))
        loop = self._loop(agent, ctx, events, notices, max_turns)
        agent.running = True
        try:
            result = await loop.run(prompt)
        finally:
            agent.running = False
        if isinstance(ctx.session, Session):
            ctx.session.usage.add(result.usage)  # the session's totals include what its subagents spent
        return Outcome(agent, result, events.tool_calls)

    def _loop(
        self, agent: Subagent, ctx: ToolContext, events: ChildEvents, notices: Notices, max_turns: int | None
    ) -> Agent:
        """The subagent's Agent: its type's tools from the parent's registry, the parent's policy and hooks."""
        settings = ctx.session.settings
        if agent.mode is not None:
            settings = settings.model_copy(update={"permission_mode": agent.mode})
        agent.session.settings = settings
        parent = _parent_executor(ctx)
        executor = Executor(
            tools_for(agent.kind, parent.registry),
            agent.session,
            policy=parent.policy,
            hooks=parent.hooks,
            emit=events,
            services=parent.services,
            agent_id=agent.id,
        )
        return Agent(
            agent.session,
            executor.registry,
            executor,
            self.llm_for(settings.model_copy(update={"model": agent.model})),
            events,
            max_turns=max_turns or settings.max_turns,
            agent_id=agent.id,
            system=subagent_system_prompt(agent.kind, agent.note),
            notices=notices,
            spend=ctx.session.run_spend if isinstance(ctx.session, Session) else None,
        )

    def start_task(
        self, agent: Subagent, work: Callable[[], Awaitable[str]], ctx: ToolContext
    ) -> BackgroundTask:
        """Run `work` as a background task of the session; its text is what TaskOutput returns."""

        async def guarded(task: BackgroundTask) -> str:
            try:
                return await work()
            finally:
                agent.running = False  # also when stopped before it started

        agent.running = True
        description = f"{agent.kind.name} subagent {agent.id}: {agent.description}"
        task = ctx.session.tasks.start_coroutine("agent", description, guarded)
        agent.task_id = task.id
        return task

    def start_background(
        self, agent: Subagent, prompt: str, ctx: ToolContext, *, max_turns: int | None = None
    ) -> ToolOutput:
        async def work() -> str:
            return (await self.run(agent, prompt, ctx, max_turns=max_turns)).report()

        task = self.start_task(agent, work, ctx)
        return ToolOutput(
            f"Started subagent {agent.id} ({agent.kind.name}) in the background as task {task.id}. "
            f"Keep working; a notice arrives when it finishes, and TaskOutput with task_id '{task.id}' "
            "then returns its final report.",
            metadata={"agent_id": agent.id, "task_id": task.id, "subagent_type": agent.kind.name},
        )
