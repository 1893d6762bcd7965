"""NotebookEdit's proof that an edit landed: the cell read back from the notebook after the edit.

A frontend can answer "ok" without applying a change (other agents report success there); reading
the cell back is the only evidence the agent may report. The result echoes the cell as it now is.
"""

from __future__ import annotations

from dataclasses import dataclass

from goat_jupyter.errors import ToolExecutionError
from goat_jupyter.live import CellInfo, FileNotebook, NotebookBackend, cell_label
from goat_jupyter.text import cut_middle

MAX_ECHO_CHARS = 2_000


@dataclass(frozen=True)
class Expected:
    """What the cell must look like after the edit; `source` None means it must be gone."""

    cell_id: str
    source: str | None
    cell_type: str | None = None


async def read_back(backend: NotebookBackend, expected: Expected) -> CellInfo | None:
    """The cell as the notebook now holds it; an error when it is not what was asked."""
    fresh = backend if backend.live else FileNotebook(backend.path)  # the file as written, not memory
    cells = await fresh.list_cells()
    found = next((cell for cell in cells if cell.id == expected.cell_id), None)
    where = "the live notebook in JupyterLab" if backend.live else f"{backend.path} on disk"
    if expected.source is None:
        if found is not None:
            raise _not_landed(f"{cell_label(found)} is still in {where}", found)
        return None
    if found is None:
        raise _not_landed(f"there is no cell with id {expected.cell_id} in {where}", None)
    if _normal(found.source) != _normal(expected.source):
        raise _not_landed(f"{cell_label(found)} in {where} does not hold the new source", found)
    if expected.cell_type is not None and found.cell_type != expected.cell_type:
        raise _not_landed(f"{cell_label(found)} is a {found.cell_type} cell, not {expected.cell_type}", found)
    return found


def echo(cell: CellInfo) -> str:
    """The cell as read back, bounded, for the tool result."""
    return f"Read back, {cell_label(cell)} is now a {cell.cell_type} cell:\n{cut_middle(cell.source, MAX_ECHO_CHARS)}"


def _normal(source: str) -> str:
    return source.replace("\r\n", "\n")


def _not_landed(what: str, cell: CellInfo | None) -> ToolExecutionError:
    shown = "" if cell is None else f"\nThe cell now reads:\n{cut_middle(cell.source, MAX_ECHO_CHARS)}"
    return ToolExecutionError(
        f"The edit was acknowledged but did not land: reading the notebook back, {what}. Do not assume "
        f"the change exists; read the notebook and retry, or ask the user to check JupyterLab.{shown}"
    )
