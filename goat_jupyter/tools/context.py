"""What a running tool may use: ToolContext, and the runtimes a host plugs in (Services)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from goat_jupyter.errors import InvalidPathError, NotAvailableError
from goat_jupyter.live.bridge import CellInfo
from goat_jupyter.live.executions import ExecutionLog
from goat_jupyter.live.select import NotebookService
from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.permissions.point import CallTool
from goat_jupyter.state import SessionState
from goat_jupyter.tools.output import ToolOutput
from goat_jupyter.web import WebService

if TYPE_CHECKING:
    from goat_jupyter.mcp_client.manager import McpManager


class ProgressSink(Protocol):
    def __call__(self, *, title: str | None = None, output: str | None = None) -> None: ...


def _no_progress(*, title: str | None = None, output: str | None = None) -> None:
    return None


class ToolList(Protocol):
    """The tools an agent may call, as definitions for the model (tools/catalog.py's ToolCatalog)."""

    def llm_tools(self) -> list[dict[str, Any]]: ...

    def search_hints(self) -> dict[str, str]: ...  # tool name -> what ToolSearch also matches


class CallHost(Protocol):
    """What a running tool sees of the executor running it (tools/runner.py's Executor)."""

    def read_deny_checker(self, session: SessionState) -> Callable[[Path], str | None] | None: ...

    def allowed_names(self) -> tuple[str, ...]: ...

    @property
    def registry(self) -> ToolList: ...  # the tools this agent may call (a subagent's subset)


class Interaction(Protocol):
    """The user's side of a cell (ui/interaction.py): questions and plan reviews."""

    async def ask_questions(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def review_plan(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class KernelAccess(Protocol):
    """The IPython shell this session runs in (kernel/services.py): RunCell and KernelInspect."""

    async def run_cell(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def inspect(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def target_cell(self, args: Any, ctx: ToolContext) -> CellInfo: ...

    def variables(self) -> list[str]:
        """One line per user variable (name, type, shape), no user code run."""
        ...


class SubagentAccess(Protocol):
    """The Agent tool's runner (subagents/runner.py)."""

    async def run_agent(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class TeamAccess(Protocol):
    """Agent teams (subagents/teams.py)."""

    async def add_member(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def create(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def send(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def delete(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class CallRecorder(Protocol):
    """Sees every call that may change something, before and after it runs (checkpoints/store.py)."""

    async def before_tool(self, tool: CallTool, args: BaseModel, ctx: ToolContext) -> object: ...

    async def after_tool(self, pending: Any, output: ToolOutput) -> None: ...


@dataclass
class Services:
    """The runtimes a host plugs into a session; None where this context has no such runtime.

    Tool arguments cross these protocols as `Any`: each input model lives beside its tool, which
    imports this module, so naming them here would close an import circle.
    """

    ui: Interaction | None = None
    bridge: NotebookService | None = None  # the live notebook in JupyterLab
    kernel: KernelAccess | None = None
    web: WebService | None = None  # the web client: WebFetch and WebSearch
    mcp: McpManager | None = None  # the MCP servers; `connections` is empty when none is configured
    subagents: SubagentAccess | None = None
    teams: TeamAccess | None = None
    checkpoints: CallRecorder | None = None  # "Revert this run" before-images
    executions: ExecutionLog | None = None  # what the kernel ran (Read and KernelInspect mark stale cells)


_T = TypeVar("_T")


def required(runtime: _T | None, what: str, tool_name: str) -> _T:
    """`runtime`, or the clear error a tool gives when its host did not attach it."""
    if runtime is None:
        raise NotAvailableError(
            f"{tool_name} is not available in this context: no {what} runtime is attached to this "
            "session (it needs a running %%goat cell with that feature enabled)."
        )
    return runtime


@dataclass
class ToolContext:
    """What a running tool may use: its session, progress, the host's runtimes and the executor."""

    session: SessionState
    tool_call_id: str = ""
    progress: ProgressSink = _no_progress
    services: Services = field(default_factory=Services)
    executor: CallHost | None = None  # the one running this call; subagents inherit its policy and events
    # The cells this call acts on as its precheck saw them (by address): the permission decision
    # reads their tags from here, and run() refuses a cell whose locks changed since.
    seen_cells: dict[str, CellFacts] = field(default_factory=lambda: dict[str, CellFacts]())

    @property
    def cwd(self) -> Path:
        return self.session.cwd

    @property
    def workspace(self) -> Path:
        return self.session.workspace

    def read_deny_checker(self) -> Callable[[Path], str | None] | None:
        """For searches over folders: the deny rule hiding a file from results (None: no such rules)."""
        return self.executor.read_deny_checker(self.session) if self.executor else None

    def resolve_path(self, raw: str) -> Path:
        """Absolute as given, `~` expanded, relative against the session's cwd; normalised."""
        if not raw or "\x00" in raw:
            raise InvalidPathError(f"Invalid path {raw!r}: a non-empty path without NUL bytes is required.")
        expanded = os.path.expanduser(raw)
        joined = expanded if os.path.isabs(expanded) else os.path.join(self.cwd, expanded)
        return Path(os.path.normpath(joined))
