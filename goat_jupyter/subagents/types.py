"""Subagent types (tools and system prompt of each), model aliases and the modes a subagent may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goat_jupyter.errors import InvalidInputError, PermissionDeniedError
from goat_jupyter.settings import PERMISSION_MODES, PermissionMode, Settings
from goat_jupyter.tools.base import Tool
from goat_jupyter.tools.catalog import ToolCatalog

# Tools no subagent gets: no nesting, no questions to the user, no plan approval, no control over the
# parent's background tasks, no team management (only the main agent leads a team).
NEVER_FOR_SUBAGENTS = frozenset(
    {
        "Agent",
        "AskUserQuestion",
        "ExitPlanMode",
        "TaskOutput",
        "TaskStop",
        "BashOutput",
        "KillShell",
        "TeamCreate",
        "SendMessage",
        "TeamDelete",
    }
)
# Tools that change nothing in the workspace although their side effect is not "read_only".
READ_ONLY_EXTRAS = frozenset({"WebFetch", "WebSearch", "TodoWrite"})

COMMON_PROMPT = """You are a subagent of goat, an agent that works inside a Jupyter notebook. The main agent \
handed you one task; the user does not see your messages and you cannot ask anyone questions, so work on \
your own until the task is done. Your final message is the only thing the main agent receives: make it a \
complete, self-contained report (what you found or did, absolute file paths, the key lines or numbers). \
Call several independent read-only tools in one turn when you can; they run in parallel."""

GENERAL_PROMPT = """You may read, search, run commands and change files to complete the task. Read a file \
before you Edit or Write it, and only change what the task asks for."""

EXPLORE_PROMPT = """You are a fast, read-only explorer. Find files with Glob and LS, search contents with \
Grep, and Read what matters. You have no tools that change anything: never try to create, edit or delete \
files. Answer the question you were given directly, citing absolute paths (and line numbers where useful)."""

PLAN_PROMPT = """You are a read-only planner. Investigate the code and data the task concerns with the \
read-only tools you have, then return a concrete implementation plan: the steps in order, the files to \
change (absolute paths) and what changes in each, and the risks or open questions. Do not change \
anything: your plan is the result."""


@dataclass(frozen=True)
class SubagentType:
    name: str
    summary: str
    prompt: str
    read_only: bool

    def allows(self, tool: Tool[Any]) -> bool:
        if tool.name in NEVER_FOR_SUBAGENTS:
            return False
        if not self.read_only:
            return True
        return tool.side_effect == "read_only" or tool.name in READ_ONLY_EXTRAS


SUBAGENT_TYPES: dict[str, SubagentType] = {
    t.name: t
    for t in (
        SubagentType("general-purpose", "all tools except Agent", GENERAL_PROMPT, read_only=False),
        SubagentType("Explore", "read-only: search and read code and data", EXPLORE_PROMPT, read_only=True),
        SubagentType("Plan", "read-only: investigate and propose a plan", PLAN_PROMPT, read_only=True),
    )
}


def subagent_type(name: str) -> SubagentType:
    """The type called `name` (case does not matter); an error lists the available ones."""
    for known in SUBAGENT_TYPES.values():
        if known.name.lower() == name.strip().lower():
            return known
    available = ", ".join(f"{t.name} ({t.summary})" for t in SUBAGENT_TYPES.values())
    raise InvalidInputError(f"Unknown subagent_type '{name}'. Available types: {available}.")


def tools_for(kind: SubagentType, parent: ToolCatalog) -> ToolCatalog:
    """The parent's tools this type may use, in the parent's order."""
    return parent.subset([tool.name for tool in parent.tools() if kind.allows(tool)])


def subagent_system_prompt(kind: SubagentType, extra: str = "") -> str:
    """The same for every session and folder: the workspace's facts and instructions follow the tool
    definitions (the preamble, then reminders), so a server's prompt cache serves every subagent."""
    sections = [COMMON_PROMPT, kind.prompt, extra]
    return "\n\n".join(section for section in sections if section)


MODEL_ALIASES = frozenset({"haiku", "sonnet", "opus", "inherit"})
# The modes a subagent may run in, per session mode: the same or stricter, never looser.
NARROWER_MODES: dict[PermissionMode, frozenset[PermissionMode]] = {
    "default": frozenset({"default", "plan", "dontAsk"}),
    "acceptEdits": frozenset({"acceptEdits", "default", "plan", "dontAsk"}),
    "bypassPermissions": frozenset(PERMISSION_MODES),
    "plan": frozenset({"plan"}),
    "dontAsk": frozenset({"dontAsk", "plan"}),
}


def resolve_model(requested: str | None, settings: Settings) -> str:
    """haiku/sonnet/opus go through settings.model_aliases (default: the session's model); else as given."""
    if not requested or not requested.strip():
        return settings.model
    name = requested.strip()
    aliases = {key.lower(): value for key, value in settings.model_aliases.items()}
    if name.lower() in aliases:
        return aliases[name.lower()]
    return settings.model if name.lower() in MODEL_ALIASES else name


def checked_mode(requested: str | None, settings: Settings) -> PermissionMode | None:
    """A subagent's own permission mode, refused when it would loosen the session's."""
    if requested is None:
        return None
    mode = next((m for m in PERMISSION_MODES if m == requested), None)
    if mode is None:
        raise InvalidInputError(f"Unknown mode '{requested}'. Valid modes: {', '.join(PERMISSION_MODES)}.")
    current = settings.permission_mode
    if mode not in NARROWER_MODES[current]:
        allowed = ", ".join(sorted(NARROWER_MODES[current]))
        raise PermissionDeniedError(
            f"A subagent cannot run in mode {mode}: the session is in mode {current}, and a subagent's "
            f"mode may only be the same or stricter ({allowed})."
        )
    return mode
