"""A workspace's project configuration as folder trust sees it: what its files would widen, one item
at a time, and those files with only the approved widening parts kept.

Project files: `.goat/settings.json`, `.mcp.json`, `.claude/settings.json` and
`.claude/settings.local.json` of the workspace (the files goat reads; a file that is also the user's
own, e.g. with the workspace at `~`, is the user's). Widening parts: MCP servers (each entry whole:
command, arguments, environment, URL, headers), command hooks (event, matcher, command), allow rules
a permission mode other than default/plan/dontAsk (`permission_mode`, `permissions.defaultMode`)
and every user-only setting (`api_base`: an endpoint would receive the key; config/model.py's
Scope.USER). Limits apply only where they lower the user's (config/limits.py); everything else
(deny and ask rules, the model) only narrows or changes no rights. `.goat/settings.json` is read
under the settings' own field names (`mcpServers` and `mcp_servers` are one setting), so every
spelling pydantic accepts is listed and filtered here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from goat_jupyter.config.claude_files import claude_settings_files, home_dir, read_object
from goat_jupyter.config.model import USER, fields_of, resolve_names

NARROW_MODES = frozenset({"default", "plan", "dontAsk"})
GOAT_SETTINGS = Path(".goat") / "settings.json"
MCP_JSON = ".mcp.json"
ItemKind = Literal["server", "hook", "allow", "mode", "setting"]
Covers = Callable[[str], bool]  # whether an item key is approved


def goat_home() -> Path:
    return Path(os.environ.get("GOAT_HOME", Path.home() / ".goat"))


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def allow_key(rule: str) -> str:
    return f"allow {rule}"


def mode_key(mode: str) -> str:
    return f"mode {mode}"


def hook_key(event: str, matcher: str, command: str) -> str:
    return "hook " + canonical([event, matcher, command])


def server_key(name: str, entry: object) -> str:
    return "server " + canonical([name, entry])


def setting_key(name: str, value: object) -> str:
    return "setting " + canonical([name, value])


@dataclass(frozen=True)
class Item:
    """One thing a project file would allow or run; `key` is what the trust store records."""

    kind: ItemKind
    key: str
    text: str  # in words, for the prompt
    source: str  # the file, relative to the workspace
    name: str = ""  # the server's name or the mode, for short summaries


@dataclass
class ProjectFiles:
    """The raw JSON objects of a workspace's project files ({} where missing or the user's own)."""

    goat: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    mcp_servers: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    claude: list[tuple[str, dict[str, Any]]] = field(
        default_factory=lambda: list[tuple[str, dict[str, Any]]]()
    )


def _same_file(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def project_goat_settings(workspace: Path) -> dict[str, Any]:
    """The workspace's `.goat/settings.json` under the settings' field names ({} when missing, or
    when it is the user's own file)."""
    goat_file = workspace / GOAT_SETTINGS
    if _same_file(goat_file, goat_home() / "settings.json"):
        return {}
    return resolve_names(read_object(goat_file) or {})


def read_project(workspace: Path, home: Path | None = None) -> ProjectFiles:
    """The workspace's project files as goat reads them."""
    home = home or home_dir()
    files = ProjectFiles(goat=project_goat_settings(workspace))
    mcp = read_object(workspace / MCP_JSON) or {}
    if isinstance(servers := mcp.get("mcpServers"), dict):
        files.mcp_servers = cast("dict[str, Any]", servers)
    user_claude = home / ".claude" / "settings.json"
    for path in claude_settings_files(workspace, home):
        if not _same_file(path, user_claude):
            files.claude.append((_relative(path, workspace), read_object(path) or {}))
    return files


def _relative(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def allow_rules(data: dict[str, Any]) -> list[str]:
    block = data.get("permissions")
    rules = cast("dict[str, Any]", block).get("allow") if isinstance(block, dict) else None
    return [r for r in cast("list[Any]", rules) if isinstance(r, str)] if isinstance(rules, list) else []


def modes(data: dict[str, Any]) -> list[str]:
    """The modes a resolved settings object sets that widen rights (`permission_mode`,
    `permissions.default_mode`)."""
    block = data.get("permissions")
    found = [data.get("permission_mode")]
    if isinstance(block, dict):
        found.append(cast("dict[str, Any]", block).get("default_mode"))
    return [str(mode) for mode in found if mode is not None and mode not in NARROW_MODES]


def command_hooks(hooks: object) -> list[tuple[str, str, str]]:
    """(event, matcher, command) of every command hook in a Claude Code style hooks block."""
    found: list[tuple[str, str, str]] = []
    for event, entries in _items(hooks):
        for entry in _dicts(entries):
            matcher = str(entry.get("matcher") or "")
            for hook in _dicts(entry.get("hooks")):
                command = hook.get("command")
                if hook.get("type", "command") == "command" and isinstance(command, str):
                    found.append((event, matcher, command))
    return found


def project_hook_commands(workspace: Path) -> list[str]:
    """The commands of every hook in the workspace's `.goat/settings.json`, approved or not."""
    data = resolve_names(read_object(workspace / GOAT_SETTINGS) or {})  # the user's own file too
    return [command for _, _, command in command_hooks(data.get("hooks"))]


def _items(value: object) -> list[tuple[str, Any]]:
    return list(cast("dict[str, Any]", value).items()) if isinstance(value, dict) else []


def _dicts(value: object) -> list[dict[str, Any]]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [cast("dict[str, Any]", item) for item in items if isinstance(item, dict)]


def _server_text(name: str, entry: object) -> str:
    spec = cast("dict[str, Any]", entry) if isinstance(entry, dict) else {}
    if isinstance(url := spec.get("url"), str):
        return f"MCP server '{name}': connects to {url}"
    args = spec.get("args")
    words = [spec.get("command"), *(cast("list[Any]", args) if isinstance(args, list) else [args])]
    command = shlex.join(str(word) for word in words if word is not None)
    env = [str(key) for key, _ in _items(spec.get("env"))]
    extra = f" (environment: {', '.join(env)})" if env else ""
    return f"MCP server '{name}': runs `{command}`{extra}"


def widening_items(files: ProjectFiles) -> list[Item]:
    """Everything the project files would widen, in file order, each key once."""
    items: list[Item] = []
    settings_servers = _items(files.goat.get("mcp_servers"))
    shadowed = {name for name, _ in settings_servers}
    for name, entry in files.mcp_servers.items():
        if name not in shadowed:  # the settings entry of the same name wins, as load_mcp_config does
            items.append(Item("server", server_key(name, entry), _server_text(name, entry), MCP_JSON, name))
    source = str(GOAT_SETTINGS)
    for name, entry in settings_servers:
        items.append(Item("server", server_key(name, entry), _server_text(name, entry), source, name))
    for event, matcher, command in command_hooks(files.goat.get("hooks")):
        text = f"{event} hook{f' for {matcher}' if matcher else ''}: runs `{command}`"
        items.append(Item("hook", hook_key(event, matcher, command), text, source))
    items.extend(Item("mode", mode_key(m), f"permission mode {m}", source, m) for m in modes(files.goat))
    items.extend(_setting_item(name, value, source) for name, value in user_settings(files.goat).items())
    for where, data in [(source, files.goat), *files.claude]:  # Claude Code's files never set the mode
        items.extend(Item("allow", allow_key(r), f"allow rule {r}", where) for r in allow_rules(data))
    return _first_of_each(items)


def user_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The user-only settings a resolved settings object sets (each waits for folder trust)."""
    return {name: data[name] for name in fields_of(USER) if name in data}


def _setting_item(name: str, value: object, source: str) -> Item:
    return Item("setting", setting_key(name, value), f"setting {name} = {canonical(value)}", source, name)


def _first_of_each(items: list[Item]) -> list[Item]:
    seen: set[str] = set()
    return [item for item in items if not (item.key in seen or seen.add(item.key))]


def trusted_goat_settings(data: dict[str, Any], covers: Covers) -> dict[str, Any]:
    """A resolved project `.goat/settings.json` object with only the approved widening parts kept."""
    kept = {k: v for k, v in data.items() if k not in user_settings(data) or covers(setting_key(k, v))}
    if kept.get("permission_mode") is not None and not _mode_ok(kept["permission_mode"], covers):
        del kept["permission_mode"]
    if isinstance(block := kept.get("permissions"), dict):
        kept["permissions"] = trusted_permissions(cast("dict[str, Any]", block), covers)
    if "hooks" in kept:
        kept["hooks"] = trusted_hooks(kept["hooks"], covers)
    if "mcp_servers" in kept:
        kept["mcp_servers"] = trusted_servers(kept["mcp_servers"], covers)
    return kept


def _mode_ok(mode: object, covers: Covers) -> bool:
    """A mode that is not text (`{}`, a list) is no mode: dropped, never hashed."""
    return isinstance(mode, str) and (mode in NARROW_MODES or covers(mode_key(mode)))


def trusted_permissions(block: dict[str, Any], covers: Covers) -> dict[str, Any]:
    kept = dict(block)
    if "allow" in kept:
        kept["allow"] = [r for r in allow_rules({"permissions": block}) if covers(allow_key(r))]
    if kept.get("default_mode") is not None and not _mode_ok(kept["default_mode"], covers):
        del kept["default_mode"]
    return kept


def trusted_hooks(hooks: object, covers: Covers) -> dict[str, Any]:
    """The hooks block with only its approved command hooks (entries left empty are dropped)."""
    kept: dict[str, list[dict[str, Any]]] = {}
    for event, entries in _items(hooks):
        for entry in _dicts(entries):
            matcher = str(entry.get("matcher") or "")
            approved = [h for h in _dicts(entry.get("hooks")) if _hook_ok(event, matcher, h, covers)]
            if approved:
                kept.setdefault(event, []).append({**entry, "hooks": approved})
    return kept


def _hook_ok(event: str, matcher: str, hook: dict[str, Any], covers: Covers) -> bool:
    command = hook.get("command")
    is_command = hook.get("type", "command") == "command" and isinstance(command, str)
    return is_command and covers(hook_key(event, matcher, str(command)))


def trusted_servers(servers: object, covers: Covers) -> dict[str, Any]:
    return {name: entry for name, entry in _items(servers) if covers(server_key(name, entry))}


_KIND_WORDS: dict[ItemKind, tuple[str, str]] = {
    "server": ("MCP server", "MCP servers"),
    "hook": ("hook", "hooks"),
    "allow": ("allow rule", "allow rules"),
    "mode": ("permission mode", "permission modes"),
    "setting": ("user-only setting", "user-only settings"),
}


def summarize_items(items: list[Item]) -> str:
    """E.g. "2 MCP servers (docs, db), 1 hook, 3 allow rules, permission mode bypassPermissions"."""
    parts: list[str] = []
    for kind, (one, many) in _KIND_WORDS.items():
        found = [item for item in items if item.kind == kind]
        names = ", ".join(item.name for item in found)
        if kind == "mode" and found:
            parts.append(f"{one} {names}")
        elif kind in ("server", "setting") and found:
            parts.append(f"{len(found)} {one if len(found) == 1 else many} ({names})")
        elif found:
            parts.append(f"{len(found)} {one if len(found) == 1 else many}")
    return ", ".join(parts)


def item_lines(items: list[Item]) -> list[str]:
    return [f"{item.source}: {item.text}" for item in items]


def items_digest(items: list[Item]) -> str:
    """A fingerprint of exactly these items: trust approves what a prompt showed, nothing else."""
    return hashlib.sha256(canonical(sorted(item.key for item in items)).encode()).hexdigest()
