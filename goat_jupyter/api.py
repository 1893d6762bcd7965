"""The public Python API: custom tools, Python hooks and an approver, from a notebook cell.

import goat_jupyter
from pydantic import BaseModel

class Lookup(BaseModel):
    city: str

@goat_jupyter.tool(read_only=True)
def weather(args: Lookup) -> str:
    "Today's weather in a city."
    return f"Sunny in {args.city}"

@goat_jupyter.hook("PreToolUse", matcher="Bash")
def no_sudo(event: dict) -> dict | None:
    if "sudo" in event["tool_input"]["command"]:
        return {"decision": "block", "reason": "no sudo here"}
    return None
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, overload

from goat_jupyter.permissions.hooks_exec import HOOK_EVENTS, HookEvent, HookFunction
from goat_jupyter.plugins.function_tool import FunctionTool, ToolFunction, function_tool
from goat_jupyter.plugins.registry import ApproverFunction, custom_tools, set_approver_function

__all__ = ["FunctionTool", "approver", "custom_tools", "hook", "tool", "unregister_tool"]

_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


@overload
def tool(fn: ToolFunction, /) -> ToolFunction: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, read_only: bool = False
) -> Callable[[ToolFunction], ToolFunction]: ...
def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
) -> Any:
    """Decorator: offer `fn` to the model as a tool from the next model request on.

    A tool that is not `read_only` asks for approval like Bash does (allow it with a rule naming the
    tool, e.g. `weather`); a read-only one runs without asking.
    """

    def register(function: ToolFunction) -> ToolFunction:
        tool_name = name or function.__name__
        if not _TOOL_NAME.match(tool_name) or tool_name.startswith("mcp__"):
            raise ValueError(f"Invalid tool name {tool_name!r}: letters, digits, _ and -, not mcp__.")
        text = description or (function.__doc__ or "").strip() or f"The user's Python function {tool_name}."
        made = function_tool(function, tool_name, text, "read_only" if read_only else "mutating")
        custom_tools()[tool_name] = made
        _runtime_registry_add(made)
        return function

    return register if fn is None else register(fn)


def unregister_tool(name: str) -> None:
    """Withdraw a tool registered with `tool` (built-in tools cannot be removed)."""
    if custom_tools().pop(name, None) is not None:
        from goat_jupyter.kernel import magic

        magic.runtime().registry.unregister(name)


def hook(event: HookEvent, matcher: str = "") -> Callable[[HookFunction], HookFunction]:
    """Decorator: run `fn(event_dict)` on PreToolUse / PostToolUse / PostToolUseFailure for the tools
    whose name matches `matcher` (a regular expression; "" for all). Return a dict as a command hook
    prints (`{"decision": "block", "reason": ...}`, `hookSpecificOutput`...) or None."""
    if event not in HOOK_EVENTS:
        raise ValueError(f"Unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}.")

    def register(fn: HookFunction) -> HookFunction:
        from goat_jupyter.kernel import magic

        magic.runtime().hooks.register(event, matcher, fn)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        return fn

    return register


def approver(fn: ApproverFunction | None) -> ApproverFunction | None:
    """Decorator: answer approval prompts in Python. `fn(request)` (sync or async) returns an
    ApprovalAnswer, a choice ("allow_once", "allow_session", "always_allow", "deny"), True/False, or
    None to show the usual prompt. `approver(None)` removes it."""
    set_approver_function(fn)
    return fn


def _runtime_registry_add(made: FunctionTool) -> None:
    from goat_jupyter.kernel import magic

    magic.runtime().registry.register(made)
