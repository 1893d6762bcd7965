"""Where the public API keeps what the user registered, so new sessions get it too (no IPython)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, Approver
from goat_jupyter.plugins.function_tool import FunctionTool

ApproverFunction = Callable[[ApprovalRequest], Any | Awaitable[Any]]
_CHOICES = ("allow_once", "allow_session", "always_allow", "deny")

_tools: dict[str, FunctionTool] = {}
_approver: list[ApproverFunction] = []


def custom_tools() -> dict[str, FunctionTool]:
    return _tools


def set_approver_function(fn: ApproverFunction | None) -> None:
    _approver[:] = [fn] if fn is not None else []


class FunctionApprover:
    """Asks the user's function first; None from it falls through to the usual prompt."""

    def __init__(self, fn: ApproverFunction, fallback: Approver | None) -> None:
        self.fn = fn
        self.fallback = fallback

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        result = self.fn(request)
        if inspect.isawaitable(result):
            result = await result
        answer = _answer(result)
        if answer is not None:
            return answer
        if self.fallback is None:
            return ApprovalAnswer("deny", "No approver answered and nobody can be asked here.")
        return await self.fallback.request(request)


def _answer(result: object) -> ApprovalAnswer | None:
    if result is None or isinstance(result, ApprovalAnswer):
        return result
    if isinstance(result, bool):
        return ApprovalAnswer("allow_once" if result else "deny")
    if result in _CHOICES:
        return ApprovalAnswer(result)  # pyright: ignore[reportArgumentType]
    raise TypeError(f"An approver returned {result!r}; expected an ApprovalAnswer, a choice, a bool or None.")


def with_user_approver(fallback: Approver | None) -> Approver | None:
    """The approver for a cell: the user's function in front of `fallback`, when one is set."""
    return FunctionApprover(_approver[0], fallback) if _approver else fallback
