"""Where a `%%goat` cell's recording may come from: the notebook the kernel runs, and other notebooks
only when the user opts in with the environment variable GOAT_REPLAY_FROM.

The kernel learns its notebook from JupyterLab (`JPY_SESSION_NAME`, see `kernel.runtime`); nbconvert
and papermill tell it nothing but start it themselves, so their command line names the notebook.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import psutil

from goat_jupyter.replay.recording import RECORDING_MIME, Recording, parse_recording
from goat_jupyter.text import loads_json

REPLAY_FROM_ENV = "GOAT_REPLAY_FROM"  # "folder", or notebook paths joined by os.pathsep
FOLDER = "folder"
MAX_NOTEBOOK_BYTES = 20_000_000  # a notebook larger than this is not searched for recordings
_OPTIONS_WITH_A_VALUE = frozenset({"--output", "--output-dir", "-o", "--cwd", "--log-output"})


@dataclass(frozen=True)
class KeptCell:
    """A code cell of a saved notebook: its id, its prompt when it is a %%goat cell, its recording."""

    cell_id: str
    prompt: str | None
    recording: Recording | None


def cell_prompt(source: str) -> str | None:
    """The prompt of a `%%goat` cell's source (below the magic line, stripped); None for other cells."""
    first, _, body = source.lstrip().partition("\n")
    words = first.split(maxsplit=1)
    return body.strip() if words and words[0] == "%%goat" else None


def read_cells(path: Path) -> list[KeptCell]:
    """The code cells of a saved notebook; none when it cannot be read or is too large."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return []
        notebook = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # JsonTooDeepError is a ValueError
        return []
    return [_kept(cell) for cell in map(_dict, _list(_dict(notebook).get("cells"))) if cell]


def _kept(cell: dict[str, Any]) -> KeptCell:
    source: object = cell.get("source")
    parts = _list(source)
    text = "".join(map(str, parts)) if parts else str(source or "")
    recordings = (_recording(output) for output in _list(cell.get("outputs")))
    found = next((r for r in recordings if r is not None), None)
    return KeptCell(str(cell.get("id") or ""), cell_prompt(text), found)


def _recording(output: object) -> Recording | None:
    return parse_recording(_dict(_dict(output).get("data")).get(RECORDING_MIME))


def _dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


def running_notebook(known: Path | None, prompt: str) -> Path | None:
    """The notebook this kernel runs: the one JupyterLab named, else the first notebook on the runner's
    command line (nbconvert, papermill) that holds a %%goat cell of this prompt; None when unknown."""
    if known is not None:
        return known if known.is_file() else None
    if os.environ.get("JPY_SESSION_NAME"):  # a Jupyter server's kernel whose session is no notebook
        return None
    return next((path for path in runner_notebooks() if _holds(path, prompt)), None)


def _holds(path: Path, prompt: str) -> bool:
    return any(cell.prompt == prompt for cell in read_cells(path))


def runner_notebooks() -> list[Path]:
    """The existing notebooks named on the command line of the process that started this kernel."""
    try:
        parent = psutil.Process(os.getppid())
        argv, cwd = parent.cmdline(), Path(parent.cwd())
    except (psutil.Error, OSError):
        return []
    return [path for path in map(cwd.joinpath, _notebook_arguments(argv[1:])) if path.is_file()]


def _notebook_arguments(argv: list[str]) -> Iterator[str]:
    """The `.ipynb` arguments that are inputs: not an option's value (`--output again.ipynb`)."""
    after_option = False
    for word in argv:
        if not after_option and not word.startswith("-") and word.endswith(".ipynb"):
            yield word
        after_option = word in _OPTIONS_WITH_A_VALUE


@dataclass(frozen=True)
class OptedIn:
    """The other notebooks GOAT_REPLAY_FROM allows recordings from, and the names it gave that are not
    notebooks (said in the cell: bad input gets a clear line)."""

    paths: list[Path]
    missing: list[str]


def opted_in(cwd: Path, running: Path | None, environ: dict[str, str] | None = None) -> OptedIn:
    value = (os.environ if environ is None else environ).get(REPLAY_FROM_ENV, "").strip()
    if not value:
        return OptedIn([], [])
    if value == FOLDER:
        return OptedIn([p for p in folder_notebooks(cwd) if p != running], [])
    named = [name for name in value.split(os.pathsep) if name.strip()]
    paths = [(cwd / name.strip()).resolve() for name in named]
    usable = [path.is_file() and path.suffix == ".ipynb" for path in paths]
    found = [path for path, ok in zip(paths, usable, strict=True) if ok and path != running]
    return OptedIn(found, [name for name, ok in zip(named, usable, strict=True) if not ok])


def folder_notebooks(cwd: Path) -> list[Path]:
    return sorted(path.resolve() for path in cwd.glob("*.ipynb") if path.is_file())
