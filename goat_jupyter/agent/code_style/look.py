"""The first look (issue 34): in code style goat shows the model, before its first reply of a run, what
a tools-style model would first read for itself: the notebook it is in (a Read, through the executor,
so rules apply and the transcript shows it), the working folder's names and the kernel's variables.
A small model that acts by writing code cannot look first; without this it invents files and names.
"""

from __future__ import annotations

from pathlib import Path

from goat_jupyter.agent.code_style.runs import CodeRunner
from goat_jupyter.text import cut_middle
from goat_jupyter.tools.context import Services

LOOK_CHARS = 6_000  # the notebook's part; a long notebook keeps its head and tail
MAX_NAMES = 30


async def first_look(runner: CodeRunner, services: Services, cwd: Path) -> str:
    """What the model is shown with its prompt; empty where there is nothing to show."""
    parts = [await _notebook(runner), _files(cwd), _variables(services)]
    return "\n\n".join(part for part in parts if part)


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
    names = [f"{p.name}/" if p.is_dir() else p.name for p in entries[:MAX_NAMES]]
    more = f", and {len(entries) - MAX_NAMES} more" if len(entries) > MAX_NAMES else ""
    return f"Files in the working folder {cwd}: {', '.join(names) or '(none)'}{more}"


def _variables(services: Services) -> str:
    lines = services.kernel.variables()[:MAX_NAMES] if services.kernel is not None else []
    return "Variables in the kernel:\n" + "\n".join(lines) if lines else ""
