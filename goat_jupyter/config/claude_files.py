"""Claude Code's files, read as Claude Code reads them (no IPython, no goat settings import).

Permission rules: `~/.claude/settings.json` < `.claude/settings.json` < `.claude/settings.local.json`
(all below goat's own files; the lists are joined, so a deny anywhere still beats an allow).
Only `permissions.allow/deny/ask` are taken: a cloned repository's `.claude/` must not be able to
switch the permission mode, and its allow rules apply only once the folder is trusted (config/trust.py). Instructions: `~/.claude/CLAUDE.md`, then from the repository root down
to the workspace each folder's `AGENTS.md`, `CLAUDE.md` and `CLAUDE.local.md`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from goat_jupyter.text import loads_json

RULE_LISTS = ("allow", "deny", "ask")
FOLDER_INSTRUCTIONS = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")


def home_dir() -> Path:
    return Path(os.path.expanduser("~"))


def claude_settings_files(workspace: Path, home: Path | None = None) -> list[Path]:
    """Claude Code's settings files, lowest priority first (duplicates, e.g. workspace == home, once)."""
    home = home or home_dir()
    candidates = [
        home / ".claude" / "settings.json",
        workspace / ".claude" / "settings.json",
        workspace / ".claude" / "settings.local.json",
    ]
    return _unique(candidates)


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    kept: list[Path] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            kept.append(path)
    return kept


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`; None when missing, unreadable or not an object."""
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def rule_lists(data: dict[str, Any]) -> dict[str, list[str]]:
    """The string rules of a settings object's `permissions` block (anything else is dropped)."""
    block = data.get("permissions")
    if not isinstance(block, dict):
        return {}
    found: dict[str, list[str]] = {}
    for name in RULE_LISTS:
        items = cast("dict[str, Any]", block).get(name)
        if isinstance(items, list):
            found[name] = [item for item in cast("list[Any]", items) if isinstance(item, str)]
    return found


def claude_permissions(
    workspace: Path, home: Path | None = None, project_allow: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """`{"permissions": {allow, deny, ask}}` joined over Claude Code's settings files ({} if none).

    `project_allow` picks which allow rules of the workspace's files apply (folder trust); the
    user's own `~/.claude/settings.json` always applies."""
    home = home or home_dir()
    user_file = os.path.realpath(home / ".claude" / "settings.json")
    joined: dict[str, list[str]] = {}
    for path in claude_settings_files(workspace, home):
        lists = rule_lists(read_object(path) or {})
        if project_allow is not None and os.path.realpath(path) != user_file and "allow" in lists:
            lists["allow"] = [rule for rule in lists["allow"] if project_allow(rule)]
        for name, rules in lists.items():
            joined.setdefault(name, []).extend(rules)
    return {"permissions": joined} if joined else {}


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a file in worktrees)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def instruction_folders(workspace: Path) -> list[Path]:
    """The workspace and its parents up to the repository root, outermost first (just the workspace
    outside a repository)."""
    root = git_root(workspace)
    if root is None:
        return [workspace]
    chain = [workspace, *workspace.parents]
    return list(reversed(chain[: chain.index(root) + 1]))


def instruction_files(workspace: Path, home: Path | None = None) -> list[Path]:
    """Instruction files that exist, in the order they go into the system prompt."""
    home = home or home_dir()
    candidates = [home / ".claude" / "CLAUDE.md"]
    for folder in instruction_folders(workspace.resolve()):
        candidates.extend(folder / name for name in FOLDER_INSTRUCTIONS)
    return [path for path in _unique(candidates) if path.is_file()]
