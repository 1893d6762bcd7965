"""Running one hook (a shell command or a Python callable) and reading its answer."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from goat_jupyter.processes.spawn import describe_exit, kill_group
from goat_jupyter.text import cut_middle, loads_json

HookEvent = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure"]
HOOK_EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
HookResult = Mapping[str, Any] | None
HookFunction = Callable[[dict[str, Any]], HookResult | Awaitable[HookResult]]

BLOCK_EXIT_CODE = 2
MAX_TEXT = 10_000
_PERMISSION = ("allow", "deny", "ask")


@dataclass(frozen=True)
class CommandHook:
    """A shell command from settings: gets the event JSON on stdin."""

    command: str
    timeout_s: float

    @property
    def label(self) -> str:
        return f"hook command {self.command!r}"


@dataclass(frozen=True)
class FunctionHook:
    """A Python callable registered through the API: gets the event dict, returns a dict or None."""

    fn: HookFunction
    timeout_s: float | None

    @property
    def label(self) -> str:
        return f"hook function {getattr(self.fn, '__qualname__', repr(self.fn))}"


@dataclass
class HookReply:
    """One hook's answer. `decision` "deny" blocks (PreToolUse) or feeds `reason` to the model (Post)."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    notice: str | None = None  # for the user only (systemMessage, a failing or hanging hook)


async def run_hook(
    hook: CommandHook | FunctionHook, payload: dict[str, Any], cwd: Path, workspace: Path
) -> HookReply:
    """Run one hook; any failure becomes a notice, never an exception (cancellation still propagates)."""
    try:
        if isinstance(hook, CommandHook):
            return await _run_command(hook, payload, cwd, workspace)
        return await _run_function(hook, payload)
    except asyncio.TimeoutError:
        return HookReply(notice=f"The {hook.label} timed out after {hook.timeout_s:g} s and was stopped.")
    except Exception as exc:
        return HookReply(notice=f"The {hook.label} failed: {type(exc).__name__}: {exc}")


async def _run_function(hook: FunctionHook, payload: dict[str, Any]) -> HookReply:
    result: object = hook.fn(copy.deepcopy(payload))
    if inspect.isawaitable(result):
        result = await asyncio.wait_for(_awaited(result), hook.timeout_s)
    if result is None:
        return HookReply()
    if not isinstance(result, Mapping):
        return HookReply(
            notice=f"The {hook.label} returned {type(result).__name__}; expected a dict or None."
        )
    return reply_from_json(cast("Mapping[str, Any]", result), payload["hook_event_name"])


async def _awaited(result: Awaitable[object]) -> object:
    return await result


async def _run_command(hook: CommandHook, payload: dict[str, Any], cwd: Path, workspace: Path) -> HookReply:
    env = {**os.environ, "GOAT_PROJECT_DIR": str(workspace), "CLAUDE_PROJECT_DIR": str(workspace)}
    process = await asyncio.create_subprocess_shell(
        hook.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd if cwd.is_dir() else workspace,
        env=env,
        start_new_session=True,  # its own process group: a timeout kills every child too
    )
    data = json.dumps(payload, default=str).encode()
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(data), hook.timeout_s)
    except BaseException:
        kill_group(process)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 5)
        raise
    code = process.returncode if process.returncode is not None else -1
    return reply_from_exit(hook, payload["hook_event_name"], code, _text(stdout), _text(stderr))


def _text(raw: bytes) -> str:
    return cut_middle(raw.decode("utf-8", errors="replace").strip(), MAX_TEXT)


def reply_from_exit(hook: CommandHook, event: HookEvent, code: int, stdout: str, stderr: str) -> HookReply:
    """Exit 0: JSON on stdout (if any) is the answer; exit 2: block with stderr; else a notice."""
    if code == 0:
        if not stdout.startswith("{"):
            return HookReply()
        try:
            data = loads_json(stdout)
        except ValueError:
            return HookReply(
                notice=f"The {hook.label} printed output that is not valid JSON; it was ignored."
            )
        return (
            reply_from_json(cast("Mapping[str, Any]", data), event) if isinstance(data, dict) else HookReply()
        )
    if code == BLOCK_EXIT_CODE:
        reason = stderr or f"Blocked by the {hook.label} (exit code 2)."
        return HookReply(decision="deny", reason=reason)
    detail = f": {stderr}" if stderr else "."
    return HookReply(notice=f"The {hook.label} failed ({describe_exit(code)}){detail}")


def reply_from_json(data: Mapping[str, Any], event: HookEvent) -> HookReply:
    """Claude Code's hook output: legacy `decision`/`reason`, `continue`, and `hookSpecificOutput`."""
    specific_raw = data.get("hookSpecificOutput")
    specific: Mapping[str, Any] = (
        cast("Mapping[str, Any]", specific_raw) if isinstance(specific_raw, dict) else {}
    )
    reply = HookReply(notice=_str(data.get("systemMessage")))
    legacy = data.get("decision")
    if legacy in ("block", "deny"):
        reply.decision, reply.reason = "deny", _str(data.get("reason")) or "Blocked by a hook."
    elif legacy in ("approve", "allow") and event == "PreToolUse":
        reply.decision, reply.reason = "allow", _str(data.get("reason")) or ""
    if data.get("continue") is False:
        reply.decision = "deny"
        reply.reason = _str(data.get("stopReason")) or reply.reason or "A hook stopped this call."
    wanted = specific.get("permissionDecision")
    if event == "PreToolUse" and wanted in _PERMISSION:
        reply.decision = wanted
        reply.reason = _str(specific.get("permissionDecisionReason")) or reply.reason
    updated = specific.get("updatedInput")
    if event == "PreToolUse" and isinstance(updated, dict):
        reply.updated_input = dict(cast("dict[str, Any]", updated))
    reply.additional_context = _str(specific.get("additionalContext"))
    return reply


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
