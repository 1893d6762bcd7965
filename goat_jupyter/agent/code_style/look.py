"""The first look (issue 34): in code style goat shows the model, before its first reply of a run, what
a tools-style model would first read for itself: the notebook it is in and the first lines of the
files the prompt names (Reads, through the executor, so rules apply and the transcript shows them),
the working folder's names and the kernel's variables.
A small model that acts by writing code cannot look first; without this it invents files and names.
"""

from __future__ import annotations

import re
from pathlib import Path

from goat_jupyter.agent.code_style.runs import CodeRunner
from goat_jupyter.text import cut_middle, without_surrogates
from goat_jupyter.tools.context import Services

LOOK_CHARS = 6_000  # the notebook's part; a long notebook keeps its head and tail
MAX_NAMES = 30
NAMED_FILES = 3  # files the prompt names, shown
NAMED_LINES = 30  # of each: a script whole, a table's header and first rows
_WORD = re.compile(r"[\w./-]+\.\w+")


async def first_look(runner: CodeRunner, services: Services, cwd: Path, prompt: str) -> str:
    """What the model is shown with its prompt; empty where there is nothing to show."""
    named = [await _named(runner, path) for path in named_files(prompt, cwd)]
    parts = [await _notebook(runner), _files(cwd), *named, _variables(services)]
    return "\n\n".join(part for part in parts if part)


def named_files(prompt: str, cwd: Path) -> list[Path]:
    """Existing files under the working folder (not notebooks) the prompt names, in its order,
    NAMED_FILES at most: a file elsewhere is the model's to ask for, not goat's to show."""
    root = cwd.resolve()
    found: list[Path] = []
    for word in _WORD.findall(prompt):
        path = (root / word).resolve()
        if path.is_relative_to(root) and path.suffix != ".ipynb" and path.is_file() and path not in found:
            found.append(path)
    return found[:NAMED_FILES]


async def _named(runner: CodeRunner, path: Path) -> str:
    read = await runner.call("Read", {"file_path": str(path), "limit": NAMED_LINES})
    return "" if read.is_error else f"{path.name}, its first lines:\n{read.content}"


async def _notebook(runner: CodeRunner) -> str:
    path = await runner.notebook()
    if path is None:
        return ""
    read = await runner.call("Read", {"file_path": str(path)})
    if read.is_error:
        return ""
    return f"The notebook you are in, as it is now:\n{cut_middle(read.content, LOOK_CHARS)}"


def _files(cwd: Path) -> str:
    try:
        entries = sorted(p for p in cwd.iterdir() if not p.name.startswith("."))
    except OSError:
        return ""
    names = [_shown_name(p) for p in entries[:MAX_NAMES]]
    more = f", and {len(entries) - MAX_NAMES} more" if len(entries) > MAX_NAMES else ""
    return f"Files in the working folder {cwd}: {', '.join(names) or '(none)'}{more}"


def _shown_name(path: Path) -> str:
    """A file name as one printable token: a name holding a newline cannot pose as a line of goat's."""
    name = path.name if path.name.isprintable() else ascii(path.name)
    return f"{without_surrogates(name)}/" if path.is_dir() else without_surrogates(name)


def _variables(services: Services) -> str:
    lines = services.kernel.variables()[:MAX_NAMES] if services.kernel is not None else []
    return "Variables in the kernel:\n" + "\n".join(lines) if lines else ""
