"""The permission engine (pure): modes, rules and `evaluate()` deciding allow / deny / ask per call.

Order: PreToolUse hook deny > deny rules > always-ask guards > credential stores (only an allow rule
naming that exact path allows) > ask rules (and hook ask) > mode
(plan denies) > hook allow > mode allows > allow rules (settings + session) > defaults; in dontAsk
mode every remaining "ask" becomes "deny".

Mode table (what happens without any rule or hook):

| call                                        | default | acceptEdits | plan | bypass | dontAsk |
|---------------------------------------------|---------|-------------|------|--------|---------|
| Todo*, Task*, AskUserQuestion, ExitPlanMode, Config (read / non-permission keys)
|                                             | allow   | allow       | allow| allow  | allow   |
| read-only tool inside the workspace         | allow   | allow       | allow| allow  | allow   |
| read-only tool outside the workspace        | ask     | ask         | ask  | allow  | deny    |
| Write new file, inside                      | allow   | allow       | deny | allow  | allow   |
|   (except inside .git/, which asks as an edit)
| Edit, NotebookEdit, overwriting Write       | ask     | allow       | deny | allow  | deny    |
| any edit outside the workspace              | ask     | ask         | deny | allow  | deny    |
| Delete, Move inside the workspace           | ask     | ask         | deny | allow  | deny    |
| Delete, Move outside the workspace          | ask     | ask         | deny | ask    | deny    |
(a Move removes its source from its name, as a Delete does; only `Move(...)` or `Delete(...)` allow
rules covering both its ends allow one)
| Bash, RunCode, RunCell, KernelInspect, MCP  | ask     | ask         | deny | allow  | deny    |
| WebFetch, WebSearch                         | ask     | ask         | deny | allow  | deny    |
| Agent (general-purpose), TeamCreate         | ask     | ask         | deny | allow  | deny    |
| MCP tool claiming readOnlyHint (not allowed by a rule)
|                                             | allow   | allow       | ask  | allow  | allow   |
| Config widening what the agent may do (permission mode, max_turns, tools, hooks, MCP);
| creating, changing, moving or deleting configuration (`.goat/`, `.claude/`, `.mcp.json`, the
| user's settings folder, hook scripts), a file that runs code later (every `.git`, `.vscode`,
| `.idea`, `*.pth`, start-up and shadowing modules, IPython/Jupyter configuration: config/code_files.py),
| or a folder holding one (permissions/protected.py); running, replacing or deleting a notebook cell
| tagged goat:locked or goat:ask (permissions/cell_tags.py; goat:no-run / goat:no-edit are refused
| before any of this, by the tool)
|                                             | ask     | ask         | ask  | ask    | deny    |
| reading, moving, deleting or changing a credential store (`~/.ssh`, `~/.netrc`, goat's keys, the
| Jupyter runtime folder...: permissions/secrets.py), unless an allow rule names that exact path
|                                             | ask     | ask         | ask* | ask    | deny    |
(* plan mode: reads ask, changes are denied)

Paths: a call is checked for what it does to every path it touches (a Move reads and removes its
source, so Read and Delete deny/ask rules cover the source too, and writes its destination); a
folder moved, deleted or replaced counts with everything inside it.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from goat_jupyter.config.managed import load_managed
from goat_jupyter.permissions.calls import Call, describe_call
from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.permissions.rules import Anchors, RuleKind, parse_rule, rule_matches, subcommand_allowed
from goat_jupyter.permissions.secrets import exact_allow
from goat_jupyter.permissions.shell import analyse
from goat_jupyter.permissions.suggest import suggest_rules_for
from goat_jupyter.settings import PermissionMode

Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Decision:
    behavior: Behavior
    reason: str  # shown to the user when asking, to the model when denying
    rule: str | None = None  # the rule that decided, if one did


@dataclass(frozen=True)
class PermissionContext:
    """Everything evaluate() needs besides the call itself."""

    workspace: Path
    cwd: Path | None = None  # where relative paths start; the workspace when None
    mode: PermissionMode = "default"
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    home: Path = field(default_factory=Path.home)
    hook_decision: Behavior | None = None
    hook_reason: str = ""
    protected: Sequence[Path] = ()  # files only the user may change without being asked
    hook_commands: Sequence[str] = ()  # configured hook commands: the files they run are protected
    path_exists: Callable[[Path], bool] = os.path.exists
    settings_now: Mapping[str, object] = field(default_factory=lambda: dict[str, object]())  # runtime values

    @functools.cached_property
    def anchors(self) -> Anchors:
        return Anchors.of(self.workspace, self.home)


def _managed(rule: str, kind: str) -> str:
    """Where a rule of the managed policy comes from, so the user knows it cannot be removed."""
    policy = load_managed()
    return f" of {policy.reason}" if rule in policy.rules(kind) else ""


def evaluate(
    tool_name: str,
    args: Mapping[str, Any],
    side_effect: str,
    context: PermissionContext,
    *,
    code: str | None = None,
    cell: CellFacts | None = None,
) -> Decision:
    """Decide one call: allow, deny (reason for the model) or ask (reason for the user).

    `code`: the source a RunCell call would run (rules for it name that exact source);
    `cell`: the cell a RunCell / NotebookEdit call acts on (tag rules, locks)."""
    call = describe(tool_name, args, side_effect, context, code=code, cell=cell)
    if context.hook_decision == "deny":
        return Decision("deny", context.hook_reason or f"A PreToolUse hook blocked this {tool_name} call.")
    if rule := _first_match(context.deny, call, "deny", context):
        return Decision(
            "deny",
            f"Permission denied: the rule {rule} in permissions.deny{_managed(rule, 'deny')} blocks this call.",
            rule,
        )
    if call.guard:
        if mode_decision(call, context.mode) == "deny":
            return Decision("deny", _plan_message(tool_name))  # plan mode changes nothing, asked or not
        return _asking(call.guard, call, context)
    if call.secret:
        return _secret_decision(call, call.secret, context)
    if rule := _first_match(context.ask, call, "ask", context):
        return _asking(
            f"The rule {rule} in permissions.ask{_managed(rule, 'ask')} requires approval. {call.ask_reason}".strip(),
            call,
            context,
            rule,
        )
    if context.hook_decision == "ask":
        return _asking(
            context.hook_reason or f"A PreToolUse hook asks for approval of {tool_name}.", call, context
        )
    by_mode = mode_decision(call, context.mode)
    if by_mode == "deny":
        return Decision("deny", _plan_message(tool_name))
    if context.hook_decision == "allow":
        return Decision("allow", context.hook_reason or "Allowed by a PreToolUse hook.")
    if by_mode == "allow":
        return Decision("allow", f"Allowed by the {context.mode} permission mode.")
    if rule := _first_match(context.allow, call, "allow", context) or _bash_allowed_piecewise(
        context.allow, call
    ):
        return Decision("allow", f"Allowed by the rule {rule}.", rule)
    if default_behavior(call) == "allow" and not (call.claimed_read_only and context.mode == "plan"):
        return Decision("allow", "Needs no approval.")
    return _asking(call.ask_reason, call, context)


def _secret_decision(call: Call, reason: str, context: PermissionContext) -> Decision:
    """A credential store: only an allow rule naming that exact path lets it run unasked."""
    if mode_decision(call, context.mode) == "deny":
        return Decision("deny", _plan_message(call.facts.tool))
    if rule := exact_allow(context.allow, call.facts, context.anchors):
        return Decision("allow", f"Allowed by the rule {rule}.", rule)
    return _asking(reason, call, context)


def mode_decision(call: Call, mode: PermissionMode) -> Behavior | None:
    """What the mode alone says; None leaves it to the allow rules and the defaults."""
    if mode == "bypassPermissions":
        return None if call.kind == "delete" and call.facts.outside else "allow"
    if call.kind in ("free", "read"):
        return None
    if mode == "plan":
        return "deny"
    if mode == "acceptEdits" and call.kind == "edit" and not call.facts.outside:
        return "allow"
    return None


def default_behavior(call: Call) -> Behavior:
    """Without rules or modes: free and in-workspace reads run, new files may be created, all else asks."""
    if call.kind == "free" or (call.kind == "read" and not call.facts.outside):
        return "allow"
    if call.kind == "edit" and call.creates and not call.facts.outside:
        return "allow"
    return "ask"


def _first_match(rules: Sequence[str], call: Call, kind: RuleKind, context: PermissionContext) -> str | None:
    for text in rules:
        try:
            rule = parse_rule(text)
        except ValueError:
            continue  # a malformed rule never matches; invalid_rules() reports it
        if rule_matches(rule, call.facts, kind, context.anchors):
            return rule.text
    return None


ReadDenyChecker = Callable[[Path], "str | None"]


def read_deny_checker(context: PermissionContext) -> ReadDenyChecker | None:
    """Read deny rules applied file by file, to keep denied files out of Grep and Glob results
    that search a folder above them. None when no deny rule names Read with a path."""
    rules = [text for text in context.deny if _is_read_path_rule(text)]
    if not rules:
        return None

    def denied_by(path: Path) -> str | None:
        call = describe("Read", {"file_path": str(path)}, "read_only", context)
        return _first_match(rules, call, "deny", context)

    return denied_by


def _is_read_path_rule(text: str) -> bool:
    try:
        rule = parse_rule(text)
    except ValueError:
        return False
    return rule.tool == "Read" and rule.specifier is not None


def _bash_allowed_piecewise(rules: Sequence[str], call: Call) -> str | None:
    """A compound command is allowed when each of its subcommands is covered by some Bash rule."""
    if call.facts.command is None:
        return None
    specs: list[tuple[str, str]] = []
    for text in rules:
        with contextlib.suppress(ValueError):
            rule = parse_rule(text)
            if rule.tool == "Bash" and rule.specifier is not None:
                specs.append((rule.text, rule.specifier))
    analysis = analyse(call.facts.command)
    if not analysis.certain:
        return None
    used: list[str] = []
    for part in analysis.commands:
        hit = next((text for text, spec in specs if subcommand_allowed(spec, part)), None)
        if hit is None:
            return None
        if hit not in used:
            used.append(hit)
    return ", ".join(used) or None


def _asking(reason: str, call: Call, context: PermissionContext, rule: str | None = None) -> Decision:
    if context.mode != "dontAsk":
        return Decision("ask", reason, rule)
    hint = " and ".join(suggest_rules_for(call, context.anchors))
    how = (
        f"add an allow rule such as {hint} to permissions.allow in .goat/settings.json"
        if hint
        else ("the user must make this change themselves")
    )
    return Decision(
        "deny",
        f"{reason} It needs approval, but the permission mode is dontAsk, which denies anything not "
        f"allowed in advance. To allow it, {how}, or use another permission mode.",
        rule,
    )


def _plan_message(tool_name: str) -> str:
    return (
        f"Plan mode is active, so {tool_name} (which changes files, runs code or uses the network) "
        "is not available. Keep investigating with read-only tools, then call ExitPlanMode with your "
        "plan; once the user approves it, the session leaves plan mode and you can carry it out."
    )


def invalid_rules(rules: Sequence[str]) -> list[str]:
    """The rules that cannot be parsed, with the reason (for a notice to the user)."""
    problems: list[str] = []
    for text in rules:
        try:
            parse_rule(text)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def suggest_rules(
    tool_name: str,
    args: Mapping[str, Any],
    context: PermissionContext,
    side_effect: str = "none",
    *,
    code: str | None = None,
) -> tuple[str, ...]:
    """The rules an "allow for session" / "always allow" answer adds; () when no rule may cover it."""
    return suggest_rules_for(describe(tool_name, args, side_effect, context, code=code), context.anchors)


def suggest_rule(
    tool_name: str, args: Mapping[str, Any], context: PermissionContext, side_effect: str = "none"
) -> str | None:
    """The suggested rules as one text (`Bash(git diff:*), Bash(cat:*)`), None when there are none."""
    return ", ".join(suggest_rules(tool_name, args, context, side_effect)) or None


def describe(
    tool_name: str,
    args: Mapping[str, Any],
    side_effect: str,
    context: PermissionContext,
    *,
    code: str | None = None,
    cell: CellFacts | None = None,
) -> Call:
    """The call as the engine sees it (class, paths, command, URL, code, why it would ask)."""
    cwd = context.cwd or context.workspace
    return describe_call(
        tool_name,
        args,
        side_effect,
        context.anchors,
        cwd,
        context.protected,
        context.path_exists,
        context.hook_commands,
        context.settings_now,
        code,
        cell,
    )
