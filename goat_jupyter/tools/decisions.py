"""The permission point's contract: what a policy and hooks decide about a call (tools/runner.py asks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from goat_jupyter.permissions.point import HookOutcome as HookOutcome
from goat_jupyter.permissions.point import PermissionDecision as PermissionDecision

if TYPE_CHECKING:
    from pathlib import Path

    from goat_jupyter.state import SessionState
    from goat_jupyter.tools.base import Tool, ToolContext, ToolInput
    from goat_jupyter.tools.output import ToolOutput


class PermissionPolicy(Protocol):
    async def decide(
        self, tool: Tool[Any], args: ToolInput, ctx: ToolContext, hook: HookOutcome
    ) -> PermissionDecision: ...

    def read_deny_checker(self, session: SessionState) -> Callable[[Path], str | None] | None:
        """Which files searches must leave out (the deny rule that hides each); None: all may show."""
        ...


class Hooks(Protocol):
    async def pre_tool_use(self, name: str, args: dict[str, Any], ctx: ToolContext) -> HookOutcome: ...

    async def post_tool_use(
        self, name: str, args: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome: ...


class AllowAll:
    """The permission point's default until a real policy is plugged in."""

    async def decide(
        self, tool: Tool[Any], args: ToolInput, ctx: ToolContext, hook: HookOutcome
    ) -> PermissionDecision:
        if hook.decision == "deny":
            return PermissionDecision("deny", hook.reason or "Blocked by a PreToolUse hook.")
        return PermissionDecision("allow")

    def read_deny_checker(self, session: SessionState) -> Callable[[Path], str | None] | None:
        return None


class NoHooks:
    async def pre_tool_use(self, name: str, args: dict[str, Any], ctx: ToolContext) -> HookOutcome:
        return HookOutcome()

    async def post_tool_use(
        self, name: str, args: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome()
