"""Provenance of the cells goat writes (`metadata.goat`), and tutor style's hands-off rule.

The stamp says who wrote a cell (session, model, turn), from which `%%goat` cell and prompt, and a
hash of the source goat wrote: a cell whose source no longer has that hash was edited by the user.
The labextension's badge computes the same hash (SHA-256 of the UTF-8 source, first 16 hex digits).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, cast

from goat_jupyter.errors import DeclinedError, PermissionDeniedError
from goat_jupyter.live import CellInfo, cell_label
from goat_jupyter.permissions.cell_tags import LOCK_TAGS, REFUSE_TAGS, tag_key, tags_of
from goat_jupyter.text import loads_json
from goat_jupyter.tools.base import ToolContext

HASH_DIGITS = 16
PROMPT_CHARS = 120
TUTOR_REFUSAL = (
    "in tutor style goat does not write into the student's cells; insert a new cell below with a hint "
    "or, if the student explicitly asked for the answer, the answer"
)


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]


def goat_metadata(ctx: ToolContext, source: str) -> dict[str, Any]:
    """The stamp for a cell goat writes with `source`: session, model, turn, origin, source hash."""
    stamp: dict[str, Any] = {"session": ctx.session.session_id, "model": ctx.session.settings.model}
    turn = getattr(ctx.session, "turns", None)
    if isinstance(turn, int):
        stamp["turn"] = turn
    stamp.update(_origin(ctx))
    stamp["source_hash"] = source_hash(source)
    return {"goat": stamp}


def _origin(ctx: ToolContext) -> dict[str, str]:
    """The running `%%goat` cell's id and the first line of its prompt, where known."""
    service = ctx.services.bridge
    origin: dict[str, str] = {}
    if service is not None and service.running_cell_id:
        origin["cell"] = service.running_cell_id
    if service is not None and (line := first_line(service.running_prompt)):
        origin["prompt"] = line
    return origin


def first_line(prompt: str) -> str:
    """The prompt's first non-blank line, shortened for a badge."""
    line = next((text.strip() for text in prompt.splitlines() if text.strip()), "")
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"


def written_by_goat(cell: CellInfo) -> bool:
    """Whether goat wrote `cell` as it is now: stamped, and (when the stamp has one) hash unchanged."""
    stamp: object = cell.metadata.get("goat")
    if not isinstance(stamp, dict) or not stamp:
        return False
    known = cast("dict[str, object]", stamp).get("source_hash")
    return known is None or known == source_hash(cell.source)


def check_tutor(ctx: ToolContext, cell: CellInfo, edit_mode: str) -> None:
    """In tutor style, refuse to replace or delete a cell the student wrote (read at call time, so a
    style switched or forced in between counts)."""
    if ctx.session.settings.output_style != "tutor" or edit_mode == "insert" or written_by_goat(cell):
        return
    raise DeclinedError(
        f"Not changed: {cell_label(cell)} was written (or edited) by the student, and {TUTOR_REFUSAL}."
    )


def holds_notebook(path: Path) -> bool:
    """Whether `path` is (or links to) an existing .ipynb, or is a folder with one anywhere below."""
    if os.path.isdir(path) and not os.path.islink(path):
        return any(name.lower().endswith(".ipynb") for _, _, files in os.walk(path) for name in files)
    spellings = (path, Path(os.path.realpath(path)))
    return os.path.lexists(path) and any(p.suffix.lower() == ".ipynb" for p in spellings)


def refuse_notebook_rewrite(ctx: ToolContext, path: Path, verb: str) -> None:
    """No file tool may overwrite or remove a notebook whose cells the user guards: in tutor style
    (the student's cells), and in any style when a cell is tagged goat:locked, :ask, :no-edit."""
    if ctx.session.settings.output_style == "tutor" and holds_notebook(path):
        raise DeclinedError(
            f"Not changed: to {verb} {path} would overwrite or remove the student's notebook cells, and "
            f"{TUTOR_REFUSAL} (with NotebookEdit)."
        )
    if guarded := guarded_cells(path, ctx.session.workspace):
        raise PermissionDeniedError(
            f"Not changed: to {verb} {path} would change cells the user guards ({guarded}). Change the "
            "notebook with NotebookEdit, which asks the user for a locked cell and leaves the others alone."
        )


GUARD_TAGS = frozenset(tag_key(tag) for tag in (*LOCK_TAGS, REFUSE_TAGS["edit"]))


def guarded_cells(path: Path, workspace: Path) -> str:
    """The cells of the notebook(s) at `path` tagged as the user's locks, named for a message. A
    folder is searched only inside the workspace (outside it, deleting a folder asks anyway)."""
    found: list[str] = []
    files = [path] if _is_notebook_file(path) else []
    if os.path.isdir(path) and not os.path.islink(path):
        inside = Path(os.path.realpath(path)).is_relative_to(os.path.realpath(workspace))
        files = sorted(_notebooks_below(path)) if inside else []
    for file in files:
        for index, tags in enumerate(_cell_tags(file)):
            hit = sorted(t for t in tags if tag_key(t) in GUARD_TAGS)
            if hit:
                found.append(f"{file.name} cell {index + 1}: {hit[0]}")
    return "; ".join(found[:5]) + (" …" if len(found) > 5 else "")


def _is_notebook_file(path: Path) -> bool:
    spellings = (path, Path(os.path.realpath(path)))
    return os.path.isfile(path) and any(p.suffix.lower() == ".ipynb" for p in spellings)


def _notebooks_below(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, _dirs, names in os.walk(folder):  # unreadable folders are skipped, not raised
        found += [Path(root, name) for name in names if name.lower().endswith(".ipynb")]
    return found


def _cell_tags(file: Path) -> list[tuple[str, ...]]:
    try:
        notebook: Any = loads_json(file.read_text(encoding="utf-8"))
        cells: list[Any] = notebook.get("cells") or []
        metadata: list[dict[str, Any]] = [cell.get("metadata") or {} for cell in cells]
        return [tags_of(each) for each in metadata]
    except (OSError, ValueError, AttributeError):  # not a notebook goat can read: nothing guarded
        return []
