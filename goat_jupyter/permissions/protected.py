"""Configuration and files that run code later, which the agent never changes unasked, in any mode.

`protected_reason(path, workspace)` says why changing `path` (creating, replacing, moving or deleting
it) needs the user, or None. A path is protected when it is, lies inside or contains:
- any folder named `.goat` or `.claude` and any file named `.mcp.json` (at any depth: a moved or
  renamed folder can become the workspace's configuration),
- the user's settings folder (`$GOAT_HOME`, `~/.goat`, `~/.claude`),
- files that run code later (config/code_files.py): every `.git`, `.vscode` and `.idea` folder,
  `*.pth`, `sitecustomize`/`usercustomize`/`ipykernel_launcher` modules, IPython's and Jupyter's
  configuration, profile startup folders, kernel specs, and top-level workspace modules that shadow
  one a kernel imports while it starts,
- the managed settings folders (config/managed.py: `{sys.prefix}/etc/goat`, `/etc/goat`),
- IPython's kernel configuration and startup folder (`$IPYTHONDIR/profile_default`),
- any file a configured hook runs (words of the hook command that name a file),
- extra paths the host protects.
Both the path as written and with symlinks resolved are checked; names compare case-insensitively
and without trailing dots or spaces (case-insensitive file systems make `.GOAT` the same folder,
Windows drops a trailing `.`). Pure apart from `realpath`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.code_files import candidates, code_file_reason, entry_reason, name_key
from goat_jupyter.config.managed import managed_dirs, system_dirs
from goat_jupyter.settings import user_settings_path

PROTECTED_NAMES: dict[str, str] = {
    ".goat": "goat's settings folder",
    ".claude": "Claude Code's settings folder",
    ".mcp.json": "the list of MCP servers",
}
_PROJECT_DIR = re.compile(r"\$\{?(?:GOAT|CLAUDE)_PROJECT_DIR\}?")


def protected_reason(
    path: Path,
    workspace: Path,
    *,
    home: Path | None = None,
    hook_commands: Sequence[str] = (),
    extra: Sequence[Path] = (),
) -> str | None:
    """Why changing `path` (or the folder it is) needs the user's approval; None when it does not.
    A relative `path` is taken from the workspace; `~` is expanded."""
    path = Path(workspace, os.path.expanduser(path))
    forms, roots = _forms(path), _forms(workspace)
    for form in forms:
        if reason := _by_name(form, roots):
            return f"{path} {reason}"
    for place, label in _places(workspace, home or Path.home(), hook_commands, extra):
        if reason := _related(forms, place, label):
            return f"{path} {reason}"
    return None


def protected_inside(folder: Path, names: Sequence[str] | None, workspace: Path) -> str | None:
    """Why a folder holding `names` (paths relative to it, every folder among them; None: too many
    to list) is protected, or would be once moved to `folder` (a Move's destination)."""
    if names is None:
        return f"{folder} holds too many files to check for protected files inside it"
    base = _keys_below(Path(os.path.normpath(Path(workspace, folder))), workspace)
    for name in candidates(names, tuple(PROTECTED_NAMES), top_level=not base):
        key = name_key(name.rpartition("/")[2])
        label = PROTECTED_NAMES.get(key)
        if label is not None:
            return f"{folder} contains {name}, {label}"
        if reason := entry_reason([*base, *(name_key(part) for part in name.split("/"))]):
            return f"{folder} contains {name}, {reason}"
    return None


def _keys_below(folder: Path, workspace: Path) -> list[str]:
    """The folder's name_keys below the workspace (as written or resolved); all of them outside it."""
    for form in _forms(folder):
        for root in _forms(workspace):
            if _inside(form, root) and _key(root):
                return [name_key(part) for part in form.parts[len(root.parts) :]]
    return [name_key(part) for part in folder.parts]


def hook_commands_of(hooks: Mapping[str, Any]) -> list[str]:
    """Every command string in a Claude Code style hooks block (malformed parts are skipped)."""
    commands: list[str] = []
    for entries in hooks.values():
        for entry in _dicts(entries):
            for hook in _dicts(entry.get("hooks")):
                if isinstance(command := hook.get("command"), str):
                    commands.append(command)
    return commands


def _dicts(value: object) -> Iterable[dict[str, Any]]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [cast("dict[str, Any]", item) for item in items if isinstance(item, dict)]


def _forms(path: Path) -> tuple[Path, ...]:
    written = Path(os.path.normpath(path))
    real = Path(os.path.realpath(written))
    return (written,) if real == written else (written, real)


def _by_name(path: Path, workspace_forms: Sequence[Path]) -> str | None:
    """A protected name among the path's parts: below the workspace when the path is inside it
    (a workspace that itself lies in a `.claude` folder does not make every file protected)."""
    parts = path.parts
    for root in workspace_forms:
        if _inside(path, root) and _key(root):
            parts = parts[len(root.parts) :]
            break
    for part in parts:
        label = PROTECTED_NAMES.get(name_key(part))
        if label is not None:
            where = "is" if part == path.name else "is inside"
            return f"{where} {part}, {label}"
    return code_file_reason(parts)


def _places(
    workspace: Path, home: Path, hook_commands: Sequence[str], extra: Sequence[Path]
) -> list[tuple[Path, str]]:
    places = [
        (workspace / ".goat", "goat's settings folder"),
        (workspace / ".claude", "Claude Code's settings folder"),
        (workspace / ".mcp.json", "the list of MCP servers"),
        (workspace / ".git" / "hooks", "git's hook scripts (git runs them)"),
        (workspace / ".git" / "config", "git's configuration (it can name programs git runs)"),
        (user_settings_path().parent, "the user's goat settings folder"),
        (home / ".goat", "the user's goat settings folder"),
        (home / ".claude", "the user's Claude Code settings folder"),
        *_ipython_places(home),
        *(
            (folder, "the managed settings (an administrator's policy)")
            for folder in {*system_dirs(), *managed_dirs()}
        ),
    ]
    places += [
        (script, "a script a configured hook runs") for script in hook_scripts(hook_commands, workspace)
    ]
    places += [(Path(p), "a file the host protects") for p in extra]
    return places


def _ipython_places(home: Path) -> list[tuple[Path, str]]:
    """IPython's kernel configuration and startup scripts run code in every new kernel."""
    root = Path(os.environ.get("IPYTHONDIR") or home / ".ipython")
    label = "IPython's kernel configuration (it runs code in every new kernel)"
    return [(root / "profile_default" / name, label) for name in _IPYTHON_RUNS]


_IPYTHON_RUNS = ("ipython_kernel_config.py", "ipython_config.py", "startup")


def _related(forms: Sequence[Path], place: Path, label: str) -> str | None:
    for candidate in _forms(place):
        for form in forms:
            if _inside(form, candidate):
                return f"is {label}" if _key(form) == _key(candidate) else f"is inside {label}"
            if _inside(candidate, form):
                return f"contains {candidate}, {label}"
    return None


def _key(path: Path) -> str:
    return path.as_posix().casefold().rstrip("/")


def _inside(path: Path, folder: Path) -> bool:
    text, root = _key(path), _key(folder)
    return text == root or text.startswith(root + "/") or root == ""


def hook_scripts(commands: Sequence[str], workspace: Path) -> list[Path]:
    """The files configured hook commands name (relative words against the workspace); folders
    (`.`, the workspace, one holding it) are left out: they would protect everything."""
    scripts: list[Path] = []
    for command in commands:
        for word in _words(_PROJECT_DIR.sub(lambda _: str(workspace), command)):
            if word.startswith("-") or not ("/" in word or "." in word):
                continue
            path = Path(os.path.normpath(os.path.join(workspace, os.path.expanduser(word))))
            if not (_inside(workspace, path) or path.is_dir()):
                scripts.append(path)
    return scripts


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()
