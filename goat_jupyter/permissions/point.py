"""What the permission point sees of a call, and what it answers. The executor (tools/runner.py)
hands its Tool, ToolContext and ToolOutput to the policy and hooks; these protocols name the few
parts they read, so permissions never import the tools above them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.state import SessionState

Behavior = Literal["allow", "deny", "ask"]
SideEffect = Literal["none", "read_only", "mutating", "network", "blocking", "spawns"]


@dataclass
class PermissionDecision:
    behavior: Behavior
    message: str = ""
    updated_input: dict[str, Any] | None = None
    by_user: bool = False  # the user answered an approval prompt (its record is in the cell)


@dataclass
class HookOutcome:
    """What PreToolUse/PostToolUse hooks said: a decision, changed input, extra context."""

    decision: Behavior | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: list[str] = field(default_factory=lambda: list[str]())
    notices: list[str] = field(default_factory=lambda: list[str]())  # for the user only (failing hooks)


class CallTool(Protocol):
    """The tool being called: its name, what it may do, and the one-line title of a call."""

    name: ClassVar[str]
    side_effect: ClassVar[SideEffect]

    def title_for(self, args: Any) -> str: ...

    async def approval_code(self, args: Any, ctx: Any) -> str | None: ...

    async def approval_cell(self, args: Any, ctx: Any) -> CellFacts | None: ...


class CallHostView(Protocol):
    def allowed_names(self) -> tuple[str, ...]: ...


class CallContext(Protocol):
    """The running call: its session and id, and the executor running it."""

    @property
    def session(self) -> SessionState: ...

    @property
    def tool_call_id(self) -> str: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def workspace(self) -> Path: ...

    @property
    def executor(self) -> CallHostView | None: ...


class CallResult(Protocol):
    """A finished call's result, as PostToolUse hooks see it."""

    @property
    def content(self) -> str: ...

    @property
    def is_error(self) -> bool: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...
