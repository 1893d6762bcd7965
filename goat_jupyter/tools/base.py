"""The tool framework: Tool, ToolInput, ToolContext, ToolOutput and attachments."""

from __future__ import annotations

import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from goat_jupyter.errors import InvalidPathError, NotAvailableError
from goat_jupyter.notebook.select import NotebookService
from goat_jupyter.permissions.point import SideEffect as SideEffect
from goat_jupyter.state import SessionState
from goat_jupyter.tools.output import Attachment as Attachment
from goat_jupyter.tools.output import ToolOutput as ToolOutput


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown fields are errors, aliases accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


InputT = TypeVar("InputT", bound=ToolInput)


class ProgressSink(Protocol):
    def __call__(self, *, title: str | None = None, output: str | None = None) -> None: ...


def _no_progress(*, title: str | None = None, output: str | None = None) -> None:
    return None


class CallHost(Protocol):
    """What a running tool sees of the executor running it (tools/runner.py's Executor)."""

    def read_deny_checker(self, session: SessionState) -> Callable[[Path], str | None] | None: ...

    def allowed_names(self) -> tuple[str, ...]: ...


class Tool(ABC, Generic[InputT]):
    """A built-in tool. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    input_model: type[InputT]
    side_effect: ClassVar[SideEffect] = "none"
    max_output_chars: ClassVar[int] = 100_000
    description_file: ClassVar[str | None] = None  # defaults to <module>.md beside the module
    hidden: ClassVar[bool] = False  # aliases: callable, but not offered to the model

    def __init__(self) -> None:
        self._description: str | None = None

    @property
    def description(self) -> str:
        if self._description is None:
            self._description = _load_description(type(self))
        return self._description

    @property
    def concurrency_safe(self) -> bool:
        return self.side_effect == "read_only"

    def parameters_schema(self) -> dict[str, Any]:
        """The input JSON Schema, generated once per tool class (pydantic's generation is slow)."""
        return _schema_for(self.input_model)

    def title_for(self, args: InputT) -> str:
        """One line that names what this call does, for the cell and approvals."""
        return self.name

    async def precheck(self, args: InputT, ctx: ToolContext) -> None:
        """Raise the GoatError this call would fail with, before anyone is asked to approve it.

        Only cheap checks that change nothing (read-before-write, stale file, bad arguments);
        `run` still checks again, since things may change while the user decides.
        """
        return None

    @abstractmethod
    async def run(self, args: InputT, ctx: ToolContext) -> ToolOutput | str:
        """Do the work; raise GoatError subclasses for failures the model should see."""


class Interaction(Protocol):
    """The user's side of a cell (ui/interaction.py): questions and plan reviews."""

    async def ask_questions(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def review_plan(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class KernelAccess(Protocol):
    """The IPython shell this session runs in (kernel/services.py): RunCell and KernelInspect."""

    async def run_cell(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def inspect(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class WebAccess(Protocol):
    """WebFetch and WebSearch (web/)."""

    async def fetch(self, args: Any, ctx: ToolContext) -> ToolOutput: ...

    async def search(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


class McpResources(Protocol):
    """The MCP servers' resources (mcp/manager.py); `connections` is empty when none is configured."""

    @property
    def connections(self) -> Mapping[str, object]: ...

    async def list_resources(self, server: str | None = None) -> ToolOutput: ...

    async def read_resource(self, server: str, uri: str) -> ToolOutput: ...


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

    async def before_tool(self, tool: Tool[Any], args: ToolInput, ctx: ToolContext) -> object: ...

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
    web: WebAccess | None = None
    mcp: McpResources | None = None
    subagents: SubagentAccess | None = None
    teams: TeamAccess | None = None
    checkpoints: CallRecorder | None = None  # "Revert this run" before-images


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


@functools.cache
def _schema_for(model: type[ToolInput]) -> dict[str, Any]:
    return clean_schema(model.model_json_schema(by_alias=True))


def _load_description(tool_cls: type[Tool[Any]]) -> str:
    import inspect

    module_file = inspect.getfile(tool_cls)
    name = tool_cls.description_file or (Path(module_file).stem + ".md")
    path = Path(module_file).with_name(name)
    return path.read_text(encoding="utf-8").strip()


def render_description(text: str, *, workspace: Path, cwd: Path) -> str:
    return (
        text.replace("${workspace}", str(workspace))
        .replace("${cwd}", str(cwd))
        .replace("${directory}", str(cwd))
    )


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's `title` noise and collapse optional `anyOf [X, null]` into X."""

    def strip(node: Any, parent_key: str = "") -> Any:
        if isinstance(node, list):
            return [strip(v) for v in node]  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(node, dict):
            return node
        items: dict[str, Any] = dict(node)  # pyright: ignore[reportUnknownArgumentType]
        variants = items.get("anyOf")
        if isinstance(variants, list) and parent_key != "properties":
            non_null = [v for v in variants if v != {"type": "null"}]  # pyright: ignore[reportUnknownVariableType]
            if len(non_null) == 1 and len(non_null) < len(variants):  # pyright: ignore[reportUnknownArgumentType]
                del items["anyOf"]
                items.update(non_null[0])  # pyright: ignore[reportUnknownArgumentType]
                if items.get("default", 0) is None:
                    del items["default"]
        return {
            k: strip(v, k)
            for k, v in items.items()
            if not (k == "title" and parent_key != "properties" and isinstance(v, str))
        }

    cleaned: dict[str, Any] = strip(schema)
    cleaned.setdefault("type", "object")
    cleaned.setdefault("properties", {})
    return cleaned
