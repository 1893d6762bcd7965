"""The tool framework: Tool, ToolInput, ToolContext, ToolOutput and attachments."""

from __future__ import annotations

import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from goat_jupyter.errors import InvalidPathError, NotAvailableError
from goat_jupyter.state import SessionState
from goat_jupyter.tools.output import Attachment as Attachment
from goat_jupyter.tools.output import ToolOutput as ToolOutput

SideEffect = Literal["none", "read_only", "mutating", "network", "blocking", "spawns"]


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


@dataclass
class ToolContext:
    """What a running tool may use. `services` holds optional runtimes (bridge, ui, subagents)."""

    session: SessionState
    tool_call_id: str = ""
    progress: ProgressSink = _no_progress
    services: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    executor: CallHost | None = None  # the one running this call; subagents inherit its policy and events

    @property
    def cwd(self) -> Path:
        return self.session.cwd

    @property
    def workspace(self) -> Path:
        return self.session.workspace

    @property
    def bridge(self) -> Any:
        return self.services.get("bridge")

    def read_deny_checker(self) -> Callable[[Path], str | None] | None:
        """For searches over folders: the deny rule hiding a file from results (None: no such rules)."""
        return self.executor.read_deny_checker(self.session) if self.executor else None

    def service(self, key: str, tool_name: str) -> Any:
        """A runtime the host plugged in (ui, bridge, subagents, mcp, web); clear error if absent."""
        value = self.services.get(key)
        if value is None:
            raise NotAvailableError(
                f"{tool_name} is not available in this context: no {key} runtime is attached to this "
                "session (it needs a running %%goat cell with that feature enabled)."
            )
        return value

    def resolve_path(self, raw: str) -> Path:
        """Absolute as given, `~` expanded, relative against the session's cwd; normalised."""
        if not raw or "\x00" in raw:
            raise InvalidPathError(f"Invalid path {raw!r}: a non-empty path without NUL bytes is required.")
        expanded = os.path.expanduser(raw)
        joined = expanded if os.path.isabs(expanded) else os.path.join(self.cwd, expanded)
        return Path(os.path.normpath(joined))


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
