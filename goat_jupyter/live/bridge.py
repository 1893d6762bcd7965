"""What a notebook backend offers: the .ipynb file today, the live JupyterLab model through a comm later."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from goat_jupyter.errors import InvalidInputError

CellType = Literal["code", "markdown", "raw"]
_INDEX_REF = re.compile(r"cell-(\d+)")


@dataclass(frozen=True)
class CellInfo:
    """One cell as a backend reports it; `index` is its 0-based position."""

    id: str
    index: int
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = field(default_factory=lambda: list[dict[str, Any]]())
    metadata: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


class NotebookBackend(Protocol):
    """Cell-level operations shared by the file backend and the live (comm) bridge.

    Mutations take real cell ids (resolve `cell-N` with `find_cell` first). `save` persists the
    changes: the file backend writes the .ipynb, a live backend may do nothing.
    """

    @property
    def path(self) -> Path: ...

    @property
    def live(self) -> bool:
        """True when edits reach an open notebook at once (no read-before-write on the file)."""
        ...

    async def list_cells(self) -> list[CellInfo]: ...

    async def insert_cell(
        self,
        after_id: str | None,
        cell_type: CellType,
        source: str,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Insert after `after_id` (at the top when None); returns the new cell's id."""
        ...

    async def replace_cell(
        self,
        cell_id: str,
        source: str,
        *,
        cell_type: CellType | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Set the source (and type); code cells lose their outputs and execution count."""
        ...

    async def delete_cell(self, cell_id: str) -> None: ...

    async def set_outputs(
        self, cell_id: str, outputs: Sequence[Mapping[str, Any]], execution_count: int | None
    ) -> None: ...

    async def save(self) -> None: ...


def cell_label(cell: CellInfo, total: int | None = None) -> str:
    """How the approval, tool results and transcript all name a cell: the number a person counts
    in JupyterLab (1-based, from the top) and its id; `cell-N` addresses stay 0-based indexes."""
    of = f" of {total}" if total is not None else ""
    return f"cell {cell.index + 1}{of} (id {cell.id})"


def address_label(ref: str) -> str:
    """A cell reference as the model wrote it, in the same numbering: `cell-2` is cell 3."""
    match = _INDEX_REF.fullmatch(ref.strip())
    return f"cell {int(match.group(1)) + 1}" if match else f"cell {ref}"


def find_cell(cells: Sequence[CellInfo], ref: str, *, where: str = "the notebook") -> CellInfo:
    """A cell by real id, else by `cell-N` index; an error that says how to find ids otherwise."""
    for cell in cells:
        if cell.id == ref:
            return cell
    match = _INDEX_REF.fullmatch(ref.strip())
    if match and int(match.group(1)) < len(cells):
        return cells[int(match.group(1))]
    count = len(cells)
    valid_range = f"cell-0 to cell-{count - 1}" if count else "none: the notebook has no cells"
    raise InvalidInputError(
        f"No cell '{ref}' in {where} ({count} cells). Read the notebook to see each cell's id, "
        f'or use "cell-N" for the cell at 0-based index N (here {valid_range}).'
    )
