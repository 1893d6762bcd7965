"""Files that make code run later, outside any sandbox and without asking: git's repository folders,
editor task folders, Python's start-up hooks, modules a kernel imports while it starts, and
IPython's and Jupyter's configuration.

`code_file_reason(parts)` says why a path is one (its parts below the workspace; for a path outside
the workspace, all its parts), or None. Names compare case-insensitively and without trailing dots
or spaces, as in permissions/protected.py.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from goat_jupyter.config.kernel_modules import KERNEL_START_MODULES

KERNEL_RUNS = "this file would run the next time a kernel starts here"
# Folders protected as a whole, wherever they lie.
FOLDERS: dict[str, str] = {
    ".git": "a git repository folder (git runs its hooks and the programs its configuration names)",
    ".vscode": "an editor's project folder (VS Code runs the tasks and launch commands it names)",
    ".idea": "an editor's project folder (IDEs run the run configurations it names)",
}
# Modules Python or the kernel runs by name at start, wherever a kernel may start.
START_HOOKS = frozenset({"sitecustomize", "usercustomize", "ipykernel_launcher"})
_SHADOWED = frozenset(name.casefold() for name in KERNEL_START_MODULES)
_MODULE_SUFFIXES = frozenset({"py", "pyc", "pyw", "pyd", "so"})
_EXACT = frozenset({*FOLDERS, "startup", "kernel.json"})
_STEMS = frozenset({*START_HOOKS, "__init__"})
_SHADOWING = re.compile(
    rf"^(?:{'|'.join(sorted(_SHADOWED))})(?:\.[^/\n]*|/__init__(?:\.[^/\n]*)?)[. ]*$",
    re.IGNORECASE | re.MULTILINE,
)
_CONFIG = re.compile(r"^(ipython|jupyter)(_[a-z0-9_]+)?_config\.(py|json|d)$")


def name_key(name: str) -> str:
    return name.casefold().rstrip(". ") if name not in (".", "..") else name


def code_file_reason(parts: Sequence[str]) -> str | None:
    """Why the path made of `parts` is (or lies inside) a file that runs code later; None if not."""
    keys = [name_key(part) for part in parts]
    for index, key in enumerate(keys):
        reason = _part_reason(keys, index, key)
        if reason is not None:
            where = "is" if index == len(keys) - 1 else "is inside"
            return f"{where} {parts[index]}, {reason}"
    return None


def entry_reason(keys: Sequence[str]) -> str | None:
    """`code_file_reason` for a walk that stops at what it flags: only the last name (and, for a
    package's `__init__`, the package) is checked; `keys` are name_key()s. Fast for plain names."""
    index = len(keys) - 1
    key = keys[index]
    if not might_run_code(key, index):
        return None
    if (
        key.partition(".")[0] == "__init__"
        and index > 0
        and (reason := _part_reason(keys, index - 1, keys[index - 1]))
    ):
        return reason
    return _part_reason(keys, index, key)


def candidates(names: Sequence[str], also: Sequence[str] = (), *, top_level: bool = False) -> list[str]:
    """The names (POSIX paths) whose last part could be a code file or one of `also`: one regex
    pass over all of them (a folder of many files). `top_level`: the names start at the workspace."""
    text = "\n".join(names)
    found = [m.group(0) for m in _candidate_regex(tuple(also)).finditer(text)]
    if top_level:
        found += [m.group(0) for m in _SHADOWING.finditer(text)]
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=4)
def _candidate_regex(also: tuple[str, ...]) -> re.Pattern[str]:
    exact = "|".join(re.escape(name) for name in (*_EXACT, *also))
    hooks = "|".join(sorted(_STEMS))
    last = rf"(?:{exact}|[^/\n]*\.pth|(?:ipython|jupyter)[^/\n]*|(?:{hooks})(?:\.[^/\n]*)?)"
    return re.compile(rf"^(?:[^\n]*/)?{last}[. ]*$", re.IGNORECASE | re.MULTILINE)


def might_run_code(key: str, index: int) -> bool:
    """Whether a name (a name_key, at depth `index`) could be a code file at all: a quick test."""
    stem = key.partition(".")[0]
    named = key in _EXACT or stem in _STEMS or (index == 0 and stem in _SHADOWED)
    return named or key.endswith(".pth") or key.startswith(("ipython", "jupyter"))


def _part_reason(keys: Sequence[str], index: int, key: str) -> str | None:
    if key in FOLDERS:
        return FOLDERS[key]
    if key.endswith(".pth"):
        return f"a .pth file (Python runs its import lines at start; {KERNEL_RUNS})"
    if _CONFIG.match(key):
        return f"IPython's or Jupyter's configuration ({KERNEL_RUNS}, or when Jupyter starts)"
    if key == "startup" and index > 0 and keys[index - 1].startswith("profile_"):
        return f"an IPython profile's startup folder ({KERNEL_RUNS})"
    if key == "kernel.json" and index > 1 and keys[index - 2] == "kernels":
        return "a kernel spec (Jupyter runs the command it names to start a kernel)"
    module = _module_at(keys, index)
    if module in START_HOOKS or (index == 0 and module in _SHADOWED):
        return f"a module named {module!r} ({KERNEL_RUNS}: it would shadow the real one)"
    return None


def _module_at(keys: Sequence[str], index: int) -> str | None:
    """The module a file is (`json.py`, `json/__init__.py` counts as at the package's place)."""
    key = keys[index]
    last = index == len(keys) - 1
    if not last and index + 2 == len(keys) and _module_name(keys[index + 1]) == "__init__":
        return key  # a package: its __init__ runs when it is imported
    return _module_name(key) if last else None


def _module_name(key: str) -> str | None:
    stem, dot, suffix = key.partition(".")
    if not dot:
        return None
    return stem if suffix in _MODULE_SUFFIXES or suffix.endswith(".so") else None
