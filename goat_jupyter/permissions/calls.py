"""What a tool call touches, for the permission engine: its class, paths, command or URL."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from goat_jupyter.config.model import LIMIT, fields_of
from goat_jupyter.errors import InvalidPathError
from goat_jupyter.permissions.cell_tags import CellAction, CellFacts, lock_guard
from goat_jupyter.permissions.protected import protected_inside, protected_reason
from goat_jupyter.permissions.rules import Access, Anchors, CallFacts, FolderWalk, Target, relative_inside
from goat_jupyter.permissions.secrets import secret_reason
from goat_jupyter.permissions.shell import protected_config_guard
from goat_jupyter.processes.sandbox import isolation

CallKind = Literal["free", "read", "edit", "delete", "exec", "network", "spawn"]

# Tools that never need approval: session bookkeeping, questions to the user, leaving plan mode.
FREE_TOOLS = frozenset(
    {
        "TodoWrite",
        "TodoRead",
        "ToolSearch",
        "TaskOutput",
        "BashOutput",
        "TaskStop",
        "KillShell",
        "AskUserQuestion",
        "ExitPlanMode",
        "SendMessage",
        "TeamDelete",
    }
)
# Calls that remove a path from its name, and the only allow rules that cover them (covering
# every path they touch: a Move's source and destination alike).
_ALLOW_NAMES = {"Delete": ("Delete",), "Move": ("Move", "Delete")}
READ_PATH_ARGS = {"Read": "file_path", "Glob": "path", "Grep": "path", "LS": "path"}
EDIT_PATH_ARGS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
EXEC_TOOLS = {
    "Bash": "runs a shell command",
    "RunCode": "runs a program in a separate process",
    "RunCell": "runs a notebook cell in this kernel",
    "KernelInspect": "evaluates an expression in the kernel (it may have side effects)",
}
# Tools whose rules name the exact code they run (a cell's source, an expression).
CODE_TOOLS = frozenset({"RunCell", "KernelInspect"})
_CODE_ARGS = {"KernelInspect": "expression"}
SPAWN_TOOLS = frozenset({"Agent", "TeamCreate"})
READ_ONLY_AGENTS = frozenset({"Explore", "Plan"})
SAFE_METHODS = frozenset({"GET", "HEAD"})
_GLOB_MAGIC = frozenset("*?[{!@+")
_ESCAPED = frozenset("*?[]{}()|\\")
_KIND_BY_SIDE_EFFECT: dict[str, CallKind] = {
    "none": "read",
    "read_only": "read",
    "network": "network",
    "spawns": "spawn",
}


@dataclass(frozen=True)
class Call:
    """One described call: its class, the rule-visible facts and why it would ask."""

    facts: CallFacts
    kind: CallKind
    ask_reason: str
    creates: bool = False  # makes a new file without replacing anything (no approval inside)
    guard: str | None = None  # always asks, whatever the mode or allow rules say
    claimed_read_only: bool = False  # read-only by its own word only (an MCP tool's readOnlyHint)
    secret: str | None = None  # touches a credential store: asks every time (permissions/secrets.py)


@dataclass(frozen=True)
class _Where:
    anchors: Anchors
    cwd: Path
    extra_protected: Sequence[Path]
    exists: Callable[[Path], bool]
    hook_commands: Sequence[str] = ()

    @property
    def workspace(self) -> Path:
        return self.anchors.workspace

    @property
    def real_workspace(self) -> Path:
        return self.anchors.real_workspace

    def target(self, raw: object, *, whole: bool = False, below: Path | None = None) -> Target:
        """The path as the tools resolve it. `whole`: the call acts on whatever is there (a folder
        with its contents); `below`: the folder whose contents end up there (a Move's source)."""
        text = str(raw)
        if "\x00" in text:
            raise InvalidPathError(f"Invalid path {text!r}: paths cannot contain NUL bytes.")
        path = Path(os.path.normpath(os.path.join(self.cwd, os.path.expanduser(text))))
        walk_root = path if whole else below
        return Target.of(path, None if walk_root is None else FolderWalk.of(walk_root))

    def outside(self, targets: Sequence[Target]) -> bool:
        return any(not _within(t.real, self.real_workspace) for t in targets)

    def guarded(self, targets: Sequence[Target]) -> str | None:
        """Why one of the paths is (or holds) protected configuration; None when none is."""
        return next(filter(None, (self._guard(t) for t in targets)), None)

    def _guard(self, target: Target) -> str | None:
        reason = protected_reason(
            target.path,
            self.workspace,
            home=self.anchors.home,
            hook_commands=self.hook_commands,
            extra=self.extra_protected,
        )
        if reason is None and target.below is not None:
            reason = protected_inside(target.path, target.below.names, self.workspace)
        return reason


def describe_call(
    tool_name: str,
    args: Mapping[str, Any],
    side_effect: str,
    anchors: Anchors,
    cwd: Path,
    protected: Sequence[Path] = (),
    exists: Callable[[Path], bool] = os.path.exists,
    hook_commands: Sequence[str] = (),
    settings_now: Mapping[str, object] | None = None,
    code: str | None = None,
    cell: CellFacts | None = None,
) -> Call:
    """`settings_now`: the runtime settings' current values (is a Config change widening?);
    `code`: what a RunCell call would run (its cell's source), looked up by the caller;
    `cell`: the cell a RunCell or NotebookEdit (replace, delete) call acts on (its tags)."""
    where = _Where(anchors, cwd, protected, exists, hook_commands)
    if tool_name in READ_PATH_ARGS:
        call = _read_call(tool_name, args, where)
    elif tool_name in EDIT_PATH_ARGS or tool_name in ("Move", "Delete"):
        call = _edit_call(tool_name, args, where)
    else:
        call = _code_call(_other_call(tool_name, args, side_effect, settings_now or {}), args, code)
        return _cell_call(call, args, cell)
    call = _cell_call(call, args, cell)
    return replace(call, secret=secret_reason(call.facts, anchors.home))


def _cell_action(tool_name: str, args: Mapping[str, Any]) -> CellAction | None:
    """What the call does to an existing cell: RunCell runs it; NotebookEdit replaces or deletes it
    (an insert only places a new cell after it)."""
    if tool_name == "RunCell":
        return "run"
    if tool_name == "NotebookEdit" and args.get("edit_mode", "replace") != "insert":
        return "edit"
    return None


def _cell_call(call: Call, args: Mapping[str, Any], cell: CellFacts | None) -> Call:
    """A call on a cell carries its tags (tag rules) and, for a locked cell, the always-ask guard."""
    action = _cell_action(call.facts.tool, args)
    if action is None or cell is None:
        return call
    facts = replace(call.facts, tags=cell.keys)
    return replace(call, facts=facts, guard=call.guard or lock_guard(action, cell))


def _code_call(call: Call, args: Mapping[str, Any], code: str | None) -> Call:
    """A code-running call carries the code it runs (session rules cover that exact code)."""
    tool_name = call.facts.tool
    if tool_name not in CODE_TOOLS:
        return call
    if code is None and tool_name in _CODE_ARGS:
        code = str(args.get(_CODE_ARGS[tool_name], ""))
    return replace(call, facts=replace(call.facts, code=code))


def _read_call(tool_name: str, args: Mapping[str, Any], where: _Where) -> Call:
    raw = args.get(READ_PATH_ARGS[tool_name])
    root = where.target(raw or where.cwd)
    if tool_name == "Glob":
        root = where.target(glob_root(root.path, str(args.get("pattern") or "")))
    targets = (root,)
    folder = tool_name != "Read"
    outside = where.outside(targets)
    names = _names(tool_name, "Read")
    facts = CallFacts(tool_name, names, names, targets, targets, folder, outside=outside)
    place = "outside the workspace" if outside else "in the workspace"
    return Call(facts, "read", f"{tool_name} reads {root.path}, which is {place} ({where.workspace}).")


def _edit_call(tool_name: str, args: Mapping[str, Any], where: _Where) -> Call:
    """Every path is checked for what the call does to it: a Move reads and removes its source
    and writes its destination; a folder counts with everything inside it."""
    also: tuple[Access, ...] = ()
    if tool_name == "Move":
        source = where.target(args.get("from", ""), whole=True)
        targets = (source, where.target(args.get("to", ""), below=source.path))
        replaces = bool(args.get("overwrite")) and where.exists(targets[1].path)
        also = (Access(("Read", "Delete"), (source,)),)
    else:
        key = "path" if tool_name == "Delete" else EDIT_PATH_ARGS[tool_name]
        targets = (where.target(args.get(key, ""), whole=True),)
        replaces = where.exists(targets[0].path)
    outside = where.outside(targets)
    names = ("Delete", "Edit") if tool_name == "Delete" else _names(tool_name, "Edit")
    facts = CallFacts(
        tool_name, names, _ALLOW_NAMES.get(tool_name, names), targets, targets, outside=outside, also=also
    )
    # A Move takes its source away from its name as a Delete does (a Write may then put something
    # else there, unasked): it is a delete for the modes and the defaults.
    kind: CallKind = "delete" if tool_name in _ALLOW_NAMES else "edit"
    creates = tool_name == "Write" and not replaces  # .git and the like: guarded below
    guard = where.guarded(targets)
    guard_text = (
        f"{tool_name} would change a protected path: {guard}. Only the user may approve that."
        if guard
        else None
    )
    paths = tuple(t.path for t in targets)
    return Call(facts, kind, _edit_reason(tool_name, paths, replaces, outside), creates, guard_text)


def _edit_reason(tool_name: str, paths: tuple[Path, ...], replaces: bool, outside: bool) -> str:
    where = " (outside the workspace)" if outside else ""
    if tool_name == "Delete":
        return f"Delete removes {paths[0]}{where}; deleting always needs approval."
    if tool_name == "Move":
        replacing = ", replacing the file there" if replaces else ""
        return (
            f"Move renames {paths[0]} to {paths[1]}{where}{replacing}; it removes {paths[0]} from its name, "
            "so moving needs approval as deleting does."
        )
    if tool_name == "Write" and replaces:
        return f"Write would overwrite the existing file {paths[0]}{where}."
    return f"{tool_name} changes {paths[0]}{where}."


def _other_call(
    tool_name: str, args: Mapping[str, Any], side_effect: str, settings_now: Mapping[str, object]
) -> Call:
    plain = CallFacts(tool_name, (tool_name,), (tool_name,))
    if tool_name in FREE_TOOLS:
        return Call(plain, "free", "")
    if tool_name == "Config":
        return _config_call(plain, args, settings_now)
    if tool_name == "Bash":
        command = str(args.get("command", ""))
        guard = protected_config_guard(command)
        return Call(replace(plain, command=command), "exec", "Bash runs a shell command.", guard=guard)
    if tool_name == "RunCode":
        return _run_code_call(plain, args)
    if tool_name in EXEC_TOOLS:
        return Call(plain, "exec", f"{tool_name} {EXEC_TOOLS[tool_name]}.")
    if tool_name == "WebFetch":
        return _fetch_call(plain, args)
    if tool_name == "WebSearch":
        return Call(plain, "network", f"WebSearch searches the web for {args.get('query')!r}.")
    if tool_name in SPAWN_TOOLS:
        if tool_name == "Agent" and args.get("subagent_type") in READ_ONLY_AGENTS:
            return Call(plain, "read", "")
        return Call(plain, "spawn", f"{tool_name} starts subagents that work on their own.")
    kind = _KIND_BY_SIDE_EFFECT.get(side_effect, "exec")
    if kind == "read" and tool_name.startswith("mcp__"):
        claim = (
            f"{tool_name} says it only reads (readOnlyHint), but in plan mode only MCP tools the user "
            "allowed run without approval."
        )
        return Call(plain, kind, claim, claimed_read_only=True)
    return Call(
        plain, kind, f"{tool_name} may change things outside this notebook (side effect: {side_effect})."
    )


def _run_code_call(plain: CallFacts, args: Mapping[str, Any]) -> Call:
    """RunCode without a sandbox, or with the network on, needs the user's yes every time."""
    reason = f"RunCode {EXEC_TOOLS['RunCode']}."
    guard = None
    iso = isolation()
    if not iso.isolated:
        guard = f"RunCode cannot be isolated here ({iso.reason}): the program would run NOT isolated."
    elif args.get("network") is True:
        guard = "RunCode asks for network access for its program."
    return Call(plain, "exec", guard or reason, guard=guard and f"{guard} Only the user may approve that.")


# Config settings that widen what the agent may do (compared without case, `_`, `-` or spaces).
_WIDENING_SETTINGS = frozenset({"mode", "defaultmode", "maxturns", "turns"})
_WIDENING_WORDS = ("permission", "hook", "mcp", "allow", "tool", "turn", "deny", "sandbox", "style")


def _plain_key(setting: str) -> str:
    return "".join(c for c in setting.casefold() if c.isalnum())


# Limits, every budget included (the settings model's Scope.LIMIT): a lower value (or a limit where
# there was none) narrows; raising or removing one widens.
_LIMIT_SETTINGS = frozenset(_plain_key(name) for name in fields_of(LIMIT))


def _as_number(value: object) -> float | None:
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return None if math.isnan(number) else number


def _limit_widens(key: str, value: object, now: Mapping[str, object]) -> bool:
    current = next((v for name, v in now.items() if _plain_key(name) == key), None)
    new = _as_number(value)
    if new is None:  # removing the limit (or an unreadable value, which Config then refuses)
        return current is not None
    return current is not None and new > float(cast("float", current))


def _config_widens(setting: str, value: object, now: Mapping[str, object]) -> bool:
    key = _plain_key(setting)
    if key in _LIMIT_SETTINGS:
        return _limit_widens(key, value, now)
    return key in _WIDENING_SETTINGS or any(word in key for word in _WIDENING_WORDS)


def _config_call(plain: CallFacts, args: Mapping[str, Any], now: Mapping[str, object]) -> Call:
    setting = str(args.get("setting", ""))
    if args.get("value") is None or not _config_widens(setting, args.get("value"), now):  # None: a read
        return Call(plain, "free", "")
    guard = (
        f"Config would change {setting.strip()!r} to {args.get('value')!r}: a setting that widens what "
        "the agent may do (permissions, turns, budgets, tools, hooks, MCP servers), so only the user may approve it."
    )
    return Call(plain, "free", guard, guard=guard)


def _fetch_call(plain: CallFacts, args: Mapping[str, Any]) -> Call:
    url, method = str(args.get("url", "")), str(args.get("method") or "GET").upper()
    facts = replace(plain, url=url, allow_blocked=method not in SAFE_METHODS)
    verb = "fetches" if method in SAFE_METHODS else f"sends a {method} request to"
    return Call(facts, "network", f"WebFetch {verb} {url}.")


def _names(tool_name: str, family: str) -> tuple[str, ...]:
    return (tool_name,) if tool_name == family else (tool_name, family)


def _within(path: Path, folder: Path) -> bool:
    return relative_inside(path, folder) is not None


def glob_root(base: Path, pattern: str) -> Path:
    """The folder a Glob really searches: the pattern's literal leading folders joined to `base`."""
    if "|" in pattern:
        return base
    pattern = os.path.expanduser(pattern)
    root = Path("/") if pattern.startswith("/") else base
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    for part in parts[:-1]:
        if _GLOB_MAGIC & set(part):
            break
        root = root / part
    return Path(os.path.normpath(root))


def _escape(text: str) -> str:
    """Escape only what a glob pattern would read as special, so suggested rules stay readable."""
    return "".join("\\" + c if c in _ESCAPED else c for c in text)


def path_spec(target: Target, anchors: Anchors, *, folder: bool = False) -> str:
    """A path rule specifier for exactly `target` (or everything below it for a folder)."""
    real = target.real
    tail = "/**" if folder else ""
    if _within(real, anchors.real_workspace):
        rel = real.relative_to(anchors.real_workspace).as_posix()
        return "./" + (_escape(rel) + tail if rel != "." else "**")
    if _within(real, anchors.real_home):
        return "~/" + _escape(real.relative_to(anchors.real_home).as_posix()) + tail
    return "//" + _escape(real.as_posix().lstrip("/")) + tail
