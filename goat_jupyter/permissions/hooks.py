"""Hooks: PreToolUse / PostToolUse / PostToolUseFailure, as shell commands (settings) or Python callables.

Settings use Claude Code's format::

    {"PreToolUse": [{"matcher": "Write|Edit",
                     "hooks": [{"type": "command", "command": "./check.sh", "timeout": 60}]}]}

A matcher is a regular expression that must match the whole tool name ("" or "*" match every
tool). Every matching hook of an event runs concurrently; their answers combine as deny > ask >
allow, updated inputs merge in order, extra context is kept in order. A failing, crashing or
hanging hook (killed after its timeout) only produces a notice: it never stops the run.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from goat_jupyter.permissions.hooks_exec import (
    HOOK_EVENTS,
    CommandHook,
    FunctionHook,
    HookEvent,
    HookFunction,
    HookReply,
    run_hook,
)
from goat_jupyter.permissions.point import CallContext, CallResult, HookOutcome

DEFAULT_TIMEOUT_S = 60.0
Verdict = Literal["allow", "deny", "ask"]
_RANK: dict[Verdict, int] = {"deny": 3, "ask": 2, "allow": 1}

__all__ = ["HOOK_EVENTS", "HookEvent", "HookFunction", "HookMatcher", "HookRunner", "parse_hooks"]


@dataclass(frozen=True)
class HookMatcher:
    """Hooks that run for the tools whose name matches `pattern`."""

    pattern: str
    hooks: tuple[CommandHook | FunctionHook, ...]

    def matches(self, tool_name: str) -> bool:
        if self.pattern in ("", "*"):
            return True
        try:
            return re.fullmatch(self.pattern, tool_name) is not None
        except re.error:
            return self.pattern == tool_name


@dataclass
class ParsedHooks:
    by_event: dict[HookEvent, list[HookMatcher]] = field(
        default_factory=lambda: dict[HookEvent, list[HookMatcher]]()
    )
    problems: list[str] = field(default_factory=lambda: list[str]())


def parse_hooks(config: Mapping[str, Any], default_timeout_s: float = DEFAULT_TIMEOUT_S) -> ParsedHooks:
    """Read Claude Code's hooks block; what cannot be used is listed in `problems`, not raised."""
    parsed = ParsedHooks()
    for event, entries in config.items():
        if event not in HOOK_EVENTS:
            parsed.problems.append(
                f"Hook event {event!r} is not supported (supported: {', '.join(HOOK_EVENTS)})."
            )
            continue
        if not isinstance(entries, list):
            parsed.problems.append(f"hooks.{event} must be a list of matcher entries.")
            continue
        matchers = parsed.by_event.setdefault(event, [])
        for entry in cast("list[Any]", entries):
            matcher = _matcher(event, entry, default_timeout_s, parsed.problems)
            if matcher is not None:
                matchers.append(matcher)
    return parsed


def _matcher(event: str, entry: object, default_timeout_s: float, problems: list[str]) -> HookMatcher | None:
    if not isinstance(entry, dict):
        problems.append(f"A hooks.{event} entry is not an object.")
        return None
    item = cast("dict[str, Any]", entry)
    commands: list[CommandHook | FunctionHook] = []
    for hook in cast("list[Any]", item.get("hooks") or []):
        spec = cast("dict[str, Any]", hook) if isinstance(hook, dict) else {}
        if spec.get("type", "command") != "command" or not isinstance(spec.get("command"), str):
            problems.append(
                f"A hooks.{event} hook is not a {{'type': 'command', 'command': ...}} hook; skipped."
            )
            continue
        timeout = spec.get("timeout")
        seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else default_timeout_s
        commands.append(CommandHook(spec["command"], seconds))
    return HookMatcher(str(item.get("matcher") or ""), tuple(commands)) if commands else None


class HookRunner:
    """Implements the executor's Hooks protocol from settings hooks plus registered Python callables.

    Without an explicit `config`, the hooks in the running session's settings are used, so edits of
    `.goat/settings.json` apply to the next session without rebuilding the runner.
    """

    def __init__(
        self, config: Mapping[str, Any] | None = None, *, default_timeout_s: float = DEFAULT_TIMEOUT_S
    ):
        self.config = config
        self.default_timeout_s = default_timeout_s
        self._registered: dict[HookEvent, list[HookMatcher]] = {event: [] for event in HOOK_EVENTS}
        self._reported: set[str] = set()

    def register(
        self, event: HookEvent, matcher: str, fn: HookFunction, *, timeout_s: float | None = None
    ) -> None:
        """Add a Python hook: `fn(event_dict)` (sync or async) returns a dict like a command's JSON, or None."""
        if event not in HOOK_EVENTS:
            raise ValueError(f"Unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}.")
        self._registered[event].append(HookMatcher(matcher, (FunctionHook(fn, timeout_s),)))

    async def pre_tool_use(self, name: str, args: dict[str, Any], ctx: CallContext) -> HookOutcome:
        return await self.run_event("PreToolUse", name, {"tool_input": args}, ctx)

    async def post_tool_use(
        self, name: str, args: dict[str, Any], output: CallResult, ctx: CallContext
    ) -> HookOutcome:
        """PostToolUse after a success; PostToolUseFailure when the result is an error."""
        response = {"content": output.content, "is_error": output.is_error, "metadata": output.metadata}
        extra: dict[str, Any] = {"tool_input": args, "tool_response": response}
        if output.is_error:
            extra["error"] = output.content
            return await self.run_event("PostToolUseFailure", name, extra, ctx)
        return await self.run_event("PostToolUse", name, extra, ctx)

    async def run_event(
        self, event: HookEvent, name: str, extra: dict[str, Any], ctx: CallContext
    ) -> HookOutcome:
        parsed = self._parsed(ctx)
        notices = [p for p in parsed.problems if p not in self._reported]
        self._reported.update(notices)
        matchers = [*parsed.by_event.get(event, []), *self._registered[event]]
        hooks = [hook for m in matchers if m.matches(name) for hook in m.hooks]
        if not hooks:
            return HookOutcome(notices=notices)
        payload = _payload(event, name, extra, ctx)
        replies = await asyncio.gather(*(run_hook(h, payload, ctx.cwd, ctx.workspace) for h in hooks))
        outcome = combine(replies, args=extra.get("tool_input"))
        outcome.notices[:0] = notices
        return outcome

    def _parsed(self, ctx: CallContext) -> ParsedHooks:
        config = self.config if self.config is not None else ctx.session.settings.hooks
        return parse_hooks(config, self.default_timeout_s)


def _payload(event: HookEvent, name: str, extra: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {
        "hook_event_name": event,
        "session_id": ctx.session.session_id,
        "cwd": str(ctx.cwd),
        "permission_mode": ctx.session.settings.permission_mode,
        "tool_name": name,
        "tool_use_id": ctx.tool_call_id,
        **extra,
    }


def combine(replies: Sequence[HookReply], args: object = None) -> HookOutcome:
    """deny > ask > allow; reasons of the winning decision joined; updated inputs merged in order."""
    outcome = HookOutcome()
    decisions: list[Verdict] = [reply.decision for reply in replies if reply.decision is not None]
    if decisions:
        winner = max(decisions, key=_RANK.__getitem__)
        outcome.decision = winner
        outcome.reason = "\n".join(r.reason for r in replies if r.decision == winner and r.reason)
    merged: dict[str, Any] | None = None
    for reply in replies:
        if reply.updated_input is not None:
            base = (
                merged
                if merged is not None
                else (cast("dict[str, Any]", args) if isinstance(args, dict) else {})
            )
            merged = {**base, **reply.updated_input}
        if reply.additional_context:
            outcome.additional_context.append(reply.additional_context)
        if reply.notice:
            outcome.notices.append(reply.notice)
    outcome.updated_input = merged
    return outcome
