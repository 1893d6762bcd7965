"""The tool framework: Tool and ToolInput (ToolContext, Services and ToolOutput re-exported)."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.permissions.point import SideEffect as SideEffect
from goat_jupyter.tools.context import ProgressSink as ProgressSink
from goat_jupyter.tools.context import ToolContext as ToolContext
from goat_jupyter.tools.output import Attachment as Attachment
from goat_jupyter.tools.output import ToolOutput as ToolOutput


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown fields are errors, aliases accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


InputT = TypeVar("InputT", bound=ToolInput)


class Tool(ABC, Generic[InputT]):
    """A built-in tool. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    input_model: type[InputT]
    side_effect: ClassVar[SideEffect] = "none"
    max_output_chars: ClassVar[int] = 100_000
    spills: ClassVar[bool] = True  # results over `large_output_chars` are stored whole (tools/runner.py)
    description_file: ClassVar[str | None] = None  # defaults to <module>.md beside the module
    hidden: ClassVar[bool] = False  # aliases: callable, but not offered to the model
    # Rarely used: its schema is sent only once ToolSearch loads it (tools/offer.py); the hint says
    # in a few words what it is for, in ToolSearch's list of the tools to load.
    deferred: ClassVar[bool] = False
    search_hint: ClassVar[str] = ""

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

    def budget_group(self) -> str | None:
        """The MCP server whose tools share the token budget before they are deferred; None for a
        built-in."""
        return None

    def title_for(self, args: InputT) -> str:
        """One line that names what this call does, for the cell and approvals."""
        return self.name

    async def approval_code(self, args: InputT, ctx: ToolContext) -> str | None:
        """The exact code this call runs, for tools whose rules name it (RunCell, KernelInspect)."""
        return None

    async def approval_cell(self, args: InputT, ctx: ToolContext) -> CellFacts | None:
        """The notebook cell this call runs or changes (its tags name it in rules, lock it)."""
        return None

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
