"""One goat per kernel: the current session, its registry and services, and running a prompt."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goat_jupyter.agent.llm import LLMClient, MeteredClient, llm_client_for
from goat_jupyter.agent.loop import Agent, RunResult
from goat_jupyter.agent.meter import session_meter
from goat_jupyter.agent.session import Session, list_sessions, load_session
from goat_jupyter.config.managed import load_managed
from goat_jupyter.kernel import executions
from goat_jupyter.kernel.kernel_state import StaleReminder
from goat_jupyter.kernel.services import kernel_service
from goat_jupyter.live.select import live_notebook_service
from goat_jupyter.mcp_client import McpManager, attach_mcp
from goat_jupyter.mcp_client.manager import ServerChanges
from goat_jupyter.permissions.hooks import HookRunner
from goat_jupyter.plugins.registry import custom_tools
from goat_jupyter.processes.owner import kill_everything
from goat_jupyter.replay.rule import ReplayMemory
from goat_jupyter.settings import PermissionMode, Settings, load_settings
from goat_jupyter.subagents import attach_subagents
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.decisions import Hooks, PermissionPolicy
from goat_jupyter.tools.events import EventSink, Notice
from goat_jupyter.tools.registry import Registry
from goat_jupyter.tools.runner import Executor
from goat_jupyter.web import WebService

TICK_S = 0.1
_retiring: set[asyncio.Task[None]] = set()  # keeps fire-and-forget shutdowns alive until done


@dataclass
class RunOptions:
    """Per-cell overrides from `%%goat` options; None means "use the session's setting"."""

    model: str | None = None
    mode: PermissionMode | None = None
    max_turns: int | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    new: bool = False
    replay: bool = False  # --replay: play the cell's recording, never the model
    fresh: bool = False  # --fresh: ask the model even when the cell holds a recording


def detect_notebook_path(workspace: Path) -> Path | None:
    """The notebook this kernel serves, from the variable jupyter_server sets for kernels."""
    name = os.environ.get("JPY_SESSION_NAME")
    if not name:
        return None
    path = Path(name)
    if not path.is_absolute():
        candidate = workspace / path
        path = candidate if candidate.exists() else workspace / path.name
    return path


@dataclass
class GoatRuntime:
    """Owns the session and everything attached to it; the magic layer drives it."""

    workspace: Path
    session: Session = field(init=False)
    registry: Registry = field(init=False)
    services: Services = field(default_factory=Services)
    mcp: McpManager | None = None  # kept across sessions, like the servers it runs
    policy: PermissionPolicy | None = None
    hooks: Hooks = field(default_factory=HookRunner)  # settings hooks + hooks registered from Python
    stale: StaleReminder = field(default_factory=StaleReminder)
    trust_asked: set[str] = field(default_factory=lambda: set[str]())  # item keys asked about (folder trust)
    replay_client: LLMClient | None = None  # while a recording replays: every model call goes to it
    departed: Any = None  # the replay that stopped last (kernel/replay_run.py Departed): --fresh goes on
    replays: ReplayMemory = field(default_factory=ReplayMemory)  # what ran here: a re-run asks the model

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        self._install(self._fresh_session())

    def _fresh_session(self) -> Session:
        settings = load_settings(self.workspace)
        session = Session(workspace=self.workspace, settings=settings)
        session.notebook_path = detect_notebook_path(self.workspace)
        return session

    def _install(self, session: Session) -> None:
        self.session = session
        self.registry = default_registry(session=session)
        for tool in custom_tools().values():  # registered from a cell (goat_jupyter.tool)
            self.registry.register(tool)
        self._attach_services()

    def _attach_services(self) -> None:
        """The runtimes tools reach through `ctx.services`; one line per feature."""
        services = self.services
        services.web = WebService(llm_client=self.page_client)
        attach_subagents(services, self.llm_client)
        services.mcp = self.mcp = attach_mcp(self.mcp, self.registry, self.session)
        services.bridge = services.bridge or live_notebook_service()  # None outside a kernel
        services.kernel = services.kernel or kernel_service()
        services.executions = services.executions or executions.LOG

    def reload_settings(self) -> ServerChanges:
        """Read the settings files again (after `%goat config reload` or a change of folder trust);
        MCP servers whose configuration changed restart, new ones start, dropped ones stop."""
        self.session.settings = load_settings(self.workspace)
        return self.mcp_manager().reconfigure(self.session.settings.mcp_servers)

    def start_background_services(self) -> None:
        """Begin what connects in the background (MCP servers) as soon as the extension loads."""
        self.mcp_manager().start()

    def mcp_manager(self) -> McpManager:
        if self.mcp is None:  # set by every _install; None only while the first one runs
            self.mcp = attach_mcp(None, self.registry, self.session)
        return self.mcp

    def new_session(self) -> Session:
        self.session.release()
        retire(self.session)
        self._install(self._fresh_session())
        return self.session

    def resume(self, session_id: str | None = None) -> Session:
        """Load a saved session (the newest when no id is given) and make it current."""
        saved = list_sessions(self.workspace)
        matches = [p for p in saved if session_id is None or p.stem.startswith(session_id)]
        if not matches:
            raise LookupError(f"No saved session matches {session_id!r} in {self.workspace}/.goat/sessions.")
        self.session.release()
        session = load_session(matches[0], self.workspace)
        session.settings = self.session.settings
        session.notebook_path = self.session.notebook_path
        retire(self.session)
        self._install(session)
        return session

    def llm_client(self, settings: Settings) -> LLMClient:
        return self.replay_client or llm_client_for(settings)

    def page_client(self, settings: Settings) -> MeteredClient:
        """WebFetch's small model, charged to the running cell's budgets like every request."""
        return self.llm_client(settings).metered(session_meter(self.session))

    async def run(self, prompt: str, options: RunOptions, emit: EventSink) -> RunResult:
        """Run one prompt; a ticker keeps the loop responsive so an interrupt lands at once."""
        if options.new:
            self.new_session()
        settings = self._effective_settings(options)
        saved = self.session.settings
        self.session.settings = settings
        executor = Executor(
            self.registry,
            self.session,
            policy=self.policy,
            hooks=self.hooks,
            emit=emit,
            services=self.services,
        )
        agent = Agent(
            self.session,
            self.registry,
            executor,
            self.llm_client(settings),
            emit,
            max_turns=settings.max_turns,
            summarizer=self.replay_client or llm_client_for(settings, settings.small_model or settings.model),
        )
        ticker = asyncio.ensure_future(_tick())
        try:

            def notify(text: str) -> None:
                executor.emit(Notice(text, "info"))  # redacted: a server's error may quote the env

            await self.mcp_manager().wait_ready(notify=notify)  # the first turn sees MCP tools
            await self.stale.remind(self.services, self.session)  # cells edited since they ran, ...
            return await agent.run(prompt)
        except asyncio.CancelledError:
            await self.session.tasks.stop_all()
            raise
        finally:
            ticker.cancel()
            if self.session.settings is settings:
                # Keep runtime changes made during the run (Config tool), drop the per-cell overrides.
                self.session.settings = _drop_overrides(settings, saved, options)

    def refused_by_policy(self, options: RunOptions) -> str | None:
        """Why this run would go beyond the managed policy (model, mode, budget); None if it would not."""
        settings = self._effective_settings(options)
        policy = load_managed()
        if (broken := policy.broken_text() or settings.managed_broken) is not None:
            return broken
        keys = ("model", "small_model", "permission_mode", *policy.ceilings)
        refusals = (policy.refusal(key, getattr(settings, key)) for key in keys)
        return next((refused for refused in refusals if refused), None)

    def _effective_settings(self, options: RunOptions) -> Settings:
        update: dict[str, Any] = {}
        if options.model:
            update["model"] = options.model
        if options.mode:
            update["permission_mode"] = options.mode
        if options.max_turns:
            update["max_turns"] = options.max_turns
        if options.max_cost is not None:
            update["max_cost_per_run"] = options.max_cost
        if options.max_tokens is not None:
            update["max_tokens_per_run"] = options.max_tokens
        return self.session.settings.model_copy(update=update)

    def shutdown(self) -> None:
        """Synchronous last resort at interpreter exit: kill every process goat started."""
        self.session.tasks.kill_all_now()
        kill_everything()


def retire(session: Session) -> None:
    """Stop a replaced session's background tasks and every process goat started, from sync code."""
    kill_everything()  # also what ended calls left running with `&`
    if not any(task.status == "running" for task in session.tasks.all()):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(session.tasks.stop_all())
        return
    task = loop.create_task(session.tasks.stop_all())
    _retiring.add(task)
    task.add_done_callback(_retiring.discard)


def _drop_overrides(used: Settings, saved: Settings, options: RunOptions) -> Settings:
    restored = used.model_copy()
    if options.model:
        restored.model = saved.model
    if options.mode:  # a per-cell mode never becomes the session's, whatever the run switched to
        restored.permission_mode = saved.permission_mode
    if options.max_turns:
        restored.max_turns = saved.max_turns
    if options.max_cost is not None:
        restored.max_cost_per_run = saved.max_cost_per_run
    if options.max_tokens is not None:
        restored.max_tokens_per_run = saved.max_tokens_per_run
    return restored


async def _tick() -> None:
    while True:
        await asyncio.sleep(TICK_S)
