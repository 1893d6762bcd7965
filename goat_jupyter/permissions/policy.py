"""The executor's permission point: evaluate() the rules, then ask the user through an Approver."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from pydantic import BaseModel

from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.project import allow_key, project_hook_commands
from goat_jupyter.config.secrets import redact
from goat_jupyter.config.trust import approve_keys
from goat_jupyter.permissions.calls import CODE_TOOLS, Call
from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.permissions.engine import (
    Decision,
    PermissionContext,
    ReadDenyChecker,
    describe,
    evaluate,
    invalid_rules,
    read_deny_checker,
)
from goat_jupyter.permissions.point import CallContext, CallTool, HookOutcome, PermissionDecision
from goat_jupyter.permissions.protected import hook_commands_of
from goat_jupyter.permissions.suggest import suggest_rules_for
from goat_jupyter.settings import runtime_values, workspace_settings_path
from goat_jupyter.state import SessionState
from goat_jupyter.text import loads_json

PreviewKind = Literal["diff", "command", "url", "code", "plan", "arguments"]
Choice = Literal["allow_once", "allow_session", "always_allow", "deny"]
Risk = Literal["low", "medium", "high", "critical"]

_PREVIEWS: dict[str, PreviewKind] = {
    "Edit": "diff",
    "Write": "diff",
    "NotebookEdit": "diff",
    "Bash": "command",
    "WebFetch": "url",
    "RunCode": "code",
    "RunCell": "code",
    "KernelInspect": "code",
    "ExitPlanMode": "plan",
}
_RISKS: dict[str, Risk] = {
    "free": "low",
    "read": "low",
    "edit": "medium",
    "exec": "high",
    "network": "high",
    "spawn": "high",
    "delete": "critical",
}


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about. `suggested_rules` are what "allow for session" / "always allow"
    save (one per program of a Bash line); none when only "allow once" makes sense.
    `suggested_rule` is the same as one text, for display."""

    tool_name: str
    args: dict[str, Any]
    title: str
    preview_kind: PreviewKind
    suggested_rule: str | None
    reason: str
    tool_call_id: str = ""
    risk: Risk = "high"
    suggested_rules: tuple[str, ...] = ()

    @property
    def rules(self) -> tuple[str, ...]:
        if self.suggested_rules:
            return self.suggested_rules
        return (self.suggested_rule,) if self.suggested_rule else ()


@dataclass(frozen=True)
class ApprovalAnswer:
    choice: Choice
    feedback: str | None = None  # sent to the model with a denial
    updated_input: dict[str, Any] | None = None  # the user's edited arguments (run instead)


class Approver(Protocol):
    """Shows an approval prompt and waits (without blocking the loop) for the user's answer."""

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer: ...


def _ignore(text: str) -> None:
    return None


class RulePolicy:
    """PermissionPolicy: rules + mode + hooks decide; "ask" goes to the approver, or is denied headless."""

    def __init__(
        self,
        approver: Approver | None = None,
        *,
        protected: Sequence[Path] = (),
        notify: Callable[[str], None] = _ignore,
    ) -> None:
        self.approver = approver
        self.protected = tuple(protected)
        self.notify = notify
        self._one_prompt_at_a_time = asyncio.Lock()
        self._reported: set[str] = set()

    def context(
        self, session: SessionState, hook: HookOutcome | None = None, host_allowed: Sequence[str] = ()
    ) -> PermissionContext:
        rules = session.settings.permissions
        return PermissionContext(
            workspace=session.workspace,
            cwd=session.cwd,
            mode=session.settings.permission_mode,
            allow=(*rules.allow, *session.session_rules, *host_allowed),
            deny=tuple(rules.deny),
            ask=tuple(rules.ask),
            hook_decision=hook.decision if hook else None,
            hook_reason=hook.reason if hook else "",
            protected=self.protected,
            # Hooks the folder's files name are protected whether or not the folder is trusted yet.
            hook_commands=[
                *hook_commands_of(session.settings.hooks),
                *project_hook_commands(session.workspace),
            ],
            settings_now=runtime_values(session.settings),
        )

    def read_deny_checker(self, session: SessionState) -> ReadDenyChecker | None:
        return read_deny_checker(self.context(session))

    async def decide(
        self, tool: CallTool, args: BaseModel, ctx: CallContext, hook: HookOutcome
    ) -> PermissionDecision:
        raw: dict[str, Any] = args.model_dump(by_alias=True)
        self._report_bad_rules(ctx.session)
        seen = await _looked_up(tool, args, ctx)
        decision = self._evaluate(tool, raw, ctx, hook, seen)
        if decision.behavior != "ask":
            return PermissionDecision(
                decision.behavior, decision.reason if decision.behavior == "deny" else ""
            )
        if self.approver is None:
            return PermissionDecision("deny", self._headless_message(tool, raw, ctx, decision, seen))
        async with self._one_prompt_at_a_time:
            # An answer given while this call waited (e.g. "allow for session") may already cover it.
            decision = self._evaluate(tool, raw, ctx, hook, seen)
            if decision.behavior != "ask":
                return PermissionDecision(
                    decision.behavior, decision.reason if decision.behavior == "deny" else ""
                )
            request = self._request(tool, args, raw, ctx, decision, seen)
            try:
                answer = await self.approver.request(request)
            except Exception as exc:  # a broken prompt must not crash the run
                return PermissionDecision(
                    "deny", f"The approval prompt failed ({exc}); the call was not run."
                )
        return self._apply(answer, request, ctx.session)

    def _report_bad_rules(self, session: SessionState) -> None:
        rules = session.settings.permissions
        for problem in invalid_rules([*rules.deny, *rules.ask, *rules.allow, *session.session_rules]):
            if problem not in self._reported:
                self._reported.add(problem)
                self.notify(f"Ignoring a permission rule in the settings: {problem}")

    def _evaluate(
        self, tool: CallTool, raw: dict[str, Any], ctx: CallContext, hook: HookOutcome, seen: _Seen
    ) -> Decision:
        context = self.context(ctx.session, hook, host_allowed=_host_allowed(ctx))
        return evaluate(tool.name, raw, tool.side_effect, context, code=seen.code, cell=seen.cell)

    def _call(self, tool: CallTool, raw: dict[str, Any], session: SessionState, seen: _Seen) -> Call:
        context = self.context(session)
        return describe(tool.name, raw, tool.side_effect, context, code=seen.code, cell=seen.cell)

    def _request(
        self,
        tool: CallTool,
        args: BaseModel,
        raw: dict[str, Any],
        ctx: CallContext,
        decision: Decision,
        seen: _Seen,
    ) -> ApprovalRequest:
        call = self._call(tool, raw, ctx.session, seen)
        rules = suggest_rules_for(call, self.context(ctx.session).anchors)
        risk: Risk = _RISKS[call.kind]
        if call.guard and risk in ("low", "medium"):
            risk = "high"  # changing configuration or permissions
        declared = getattr(tool, "risk", None)  # MCP tools carry a risk from their annotations
        if declared in ("low", "medium", "high", "critical"):
            risk = declared
        return ApprovalRequest(
            tool_name=tool.name,
            args=raw,
            title=_numbered(tool.title_for(args), seen.cell),
            preview_kind=_PREVIEWS.get(tool.name, "arguments"),
            suggested_rule=", ".join(rules) or None,
            reason=decision.reason,
            tool_call_id=ctx.tool_call_id,
            risk=risk,
            suggested_rules=rules,
        )

    def _apply(
        self, answer: ApprovalAnswer, request: ApprovalRequest, session: SessionState
    ) -> PermissionDecision:
        if answer.choice == "deny":
            return PermissionDecision(
                "deny", denial_message(request.tool_name, answer.feedback), by_user=True
            )
        for rule in request.rules:
            if answer.choice == "allow_session":
                _add_once(session.session_rules, rule)
            elif answer.choice == "always_allow":
                self._always_allow(session, rule)
        return PermissionDecision("allow", updated_input=answer.updated_input)

    def _always_allow(self, session: SessionState, rule: str) -> None:
        _add_once(session.settings.permissions.allow, rule)
        try:
            save_allow_rule(session.workspace, rule)
        except (OSError, ValueError) as exc:
            _add_once(session.session_rules, rule)
            self.notify(
                f"Could not save the rule {rule} to .goat/settings.json ({exc}); it holds for this session."
            )

    def _headless_message(
        self, tool: CallTool, raw: dict[str, Any], ctx: CallContext, decision: Decision, seen: _Seen
    ) -> str:
        call = self._call(tool, raw, ctx.session, seen)
        rule = " and ".join(suggest_rules_for(call, self.context(ctx.session).anchors)) or None
        settings_file = workspace_settings_path(ctx.session.workspace)
        head = (
            f"{decision.reason} This needs the user's approval, but nobody can answer an approval prompt "
            "in this run (headless: nbclient, papermill, a terminal or a frontend without widgets), so the "
            "call was denied."
        )
        if rule is None:
            return head + " Only the user can make this change; do not retry it."
        return (
            f"{head} To allow it, the user can add an allow rule such as {rule} to permissions.allow in "
            f"{settings_file}, or run the cell with %%goat --mode acceptEdits (file edits) or "
            "%%goat --mode bypassPermissions (everything)."
        )


def denial_message(tool_name: str, feedback: str | None) -> str:
    """What the model reads when the user clicked Deny (their feedback included)."""
    text = f"The user denied this {tool_name} call, so it was not run."
    if feedback and feedback.strip():
        return f"{text} Their feedback: {feedback.strip()}"
    return text + " Ask the user how to proceed instead of retrying the same call."


def _add_once(rules: list[str], rule: str) -> None:
    if rule not in rules:
        rules.append(rule)


def save_allow_rule(workspace: Path, rule: str) -> Path:
    """Append `rule` to permissions.allow in the workspace settings file (atomic; other keys kept)."""
    path = workspace_settings_path(workspace)
    data: dict[str, Any] = {}
    if path.exists():
        loaded = loads_json(path.read_text(encoding="utf-8") or "{}")
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} does not hold a JSON object")
        data = loaded  # pyright: ignore[reportUnknownVariableType]
    permissions = data.setdefault("permissions", {})
    allow = permissions.setdefault("allow", []) if isinstance(permissions, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(allow, list):
        raise ValueError(f"permissions.allow in {path} is not a list")
    rules = cast("list[Any]", allow)
    if rule not in rules:
        rules.append(rule)
    approve_keys(workspace, [allow_key(rule)])  # the user's click approves it: folder trust keeps it
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", 0o644)
    return path


class StdinApprover:
    """Approver for terminal IPython: asks y / s / a / n on stdin (only when chosen explicitly)."""

    def __init__(self, read_line: Callable[[str], str] = input, write: Callable[[str], None] = print) -> None:
        self.read_line = read_line
        self.write = write

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.write(redact(f"goat wants to run {request.title}\n{request.reason}"))
        choices: dict[str, Choice] = {"y": "allow_once", "n": "deny"}
        prompt = "[y] allow once"
        if request.suggested_rule:
            choices |= {"s": "allow_session", "a": "always_allow"}
            prompt += f", [s] allow for this session, [a] always allow ({redact(request.suggested_rule)})"
        prompt += ", [n] deny: "
        key = ""
        while key not in choices:
            key = (await self._line(prompt, at_end="n")).strip().lower()[:1]
            if key not in choices:
                self.write("Please answer " + ", ".join(choices) + ".")
        if choices[key] == "deny":
            feedback = await self._line("Feedback for the model (Enter to skip): ", at_end="")
            return ApprovalAnswer("deny", feedback.strip() or None)
        return ApprovalAnswer(choices[key])

    async def _line(self, prompt: str, *, at_end: str) -> str:
        """One line from the user; `at_end` when stdin is closed (so a closed stdin denies)."""
        try:
            return await asyncio.to_thread(self.read_line, prompt)
        except EOFError:
            return at_end


def _numbered(title: str, cell: CellFacts | None) -> str:
    """`Run cell 3` rather than `Run cell 3f2a9c1e`: people count cells; ids are for the model."""
    if cell is None or not cell.id:
        return title
    return title.replace(f"cell {cell.id}", cell.label.split(" (id ", 1)[0])


@dataclass(frozen=True)
class _Seen:
    """What was looked up for the decision: the code a call runs, the cell it acts on."""

    code: str | None = None
    cell: CellFacts | None = None


async def _looked_up(tool: CallTool, args: BaseModel, ctx: CallContext) -> _Seen:
    """The cell (tags, source) and exact code of a call; one notebook round trip at most (the
    tool's precheck usually looked the cell up already)."""
    try:
        cell = await tool.approval_cell(args, ctx)
    except Exception:  # the cell may be gone: no tag rule then matches; run() finds it gone
        cell = None
    if cell is not None and tool.name in CODE_TOOLS:
        return _Seen(cell.source, cell)
    return _Seen(await _code_of(tool, args, ctx), cell)


async def _code_of(tool: CallTool, args: BaseModel, ctx: CallContext) -> str | None:
    """The exact code a RunCell / KernelInspect call runs (session rules name it); None if unknown."""
    if tool.name not in CODE_TOOLS:
        return None
    try:
        return await tool.approval_code(args, ctx)
    except Exception:  # the cell may be gone: no rule then covers the call, the user is asked
        return None


def _host_allowed(ctx: CallContext) -> tuple[str, ...]:
    """Tools the host marked auto-allowed (`Registry.with_allowed`) act as allow rules: deny and
    ask rules and plan mode still win over them."""
    return ctx.executor.allowed_names() if ctx.executor is not None else ()
