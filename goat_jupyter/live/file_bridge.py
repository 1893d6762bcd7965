"""The .ipynb file as a notebook backend, through nbformat (used when no frontend has it open)."""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from goat_jupyter.errors import FileNotFoundGoatError, InvalidInputError, ToolExecutionError
from goat_jupyter.fileio import atomic_write_bytes
from goat_jupyter.live.bridge import CellInfo, CellType
from goat_jupyter.text import check_json_depth

if TYPE_CHECKING:
    from nbformat import NotebookNode


class _Nbformat(NamedTuple):
    """The parts of nbformat used here, typed (nbformat is only partly annotated)."""

    new_cell: dict[str, Callable[[str], NotebookNode]]
    upgrade: Callable[[NotebookNode], NotebookNode]
    reads: Callable[..., NotebookNode]
    writes: Callable[[NotebookNode], str]
    from_dict: Callable[[dict[str, Any]], NotebookNode]
    validate: Callable[[NotebookNode], None]
    validation_error: type[Exception]


@functools.cache
def _nbformat() -> _Nbformat:
    """Import nbformat on first use: its import (jsonschema formats) costs about two seconds."""
    import nbformat
    import nbformat.v4 as nbv4

    new_cell: dict[str, Callable[[str], NotebookNode]] = {
        "code": nbv4.new_code_cell,  # pyright: ignore[reportUnknownMemberType]
        "markdown": nbv4.new_markdown_cell,  # pyright: ignore[reportUnknownMemberType]
        "raw": nbv4.new_raw_cell,  # pyright: ignore[reportUnknownMemberType]
    }
    return _Nbformat(
        new_cell=new_cell,
        upgrade=cast(Callable[["NotebookNode"], "NotebookNode"], nbv4.upgrade),  # pyright: ignore[reportUnknownMemberType]
        reads=cast(Callable[..., "NotebookNode"], nbformat.reads),  # pyright: ignore[reportUnknownMemberType]
        writes=cast(Callable[["NotebookNode"], str], nbformat.writes),  # pyright: ignore[reportUnknownMemberType]
        from_dict=cast(Callable[[dict[str, Any]], "NotebookNode"], nbformat.from_dict),  # pyright: ignore[reportUnknownMemberType]
        validate=cast(Callable[["NotebookNode"], None], nbformat.validate),
        validation_error=nbformat.ValidationError,
    )


class FileNotebook:
    """Loads the notebook on first use, edits it in memory, and writes it back atomically on `save`."""

    live = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self._nb: NotebookNode | None = None

    async def list_cells(self) -> list[CellInfo]:
        cells = [cell for cell in (await self._notebook()).cells if not _review_placeholder(cell)]
        return [_cell_info(cell, index) for index, cell in enumerate(cells)]

    async def insert_cell(
        self,
        after_id: str | None,
        cell_type: CellType,
        source: str,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        cells = (await self._notebook()).cells
        position = 0 if after_id is None else self._index_of(cells, after_id) + 1
        cell = _nbformat().new_cell[cell_type](source)
        cell.metadata.update(deepcopy(dict(metadata or {})))
        cells.insert(position, cell)
        return str(cell.id)

    async def replace_cell(
        self,
        cell_id: str,
        source: str,
        *,
        cell_type: CellType | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        cells = (await self._notebook()).cells
        index = self._index_of(cells, cell_id)
        old = cells[index]
        new_type: str = cell_type or old.cell_type
        cell = _nbformat().new_cell[new_type](source) if new_type != old.cell_type else old
        cell.id = old.id
        cell.source = source
        cell.metadata = old.metadata
        cell.metadata.update(deepcopy(dict(metadata or {})))
        if new_type == "code":
            cell.outputs = []
            cell.execution_count = None
        elif "attachments" in old and new_type == "markdown":
            cell.attachments = old.attachments
        cells[index] = cell

    async def delete_cell(self, cell_id: str) -> None:
        cells = (await self._notebook()).cells
        del cells[self._index_of(cells, cell_id)]

    async def set_outputs(
        self, cell_id: str, outputs: Sequence[Mapping[str, Any]], execution_count: int | None
    ) -> None:
        cells = (await self._notebook()).cells
        cell = cells[self._index_of(cells, cell_id)]
        if cell.cell_type != "code":
            raise InvalidInputError(
                f"Cell {cell_id} is a {cell.cell_type} cell; only code cells have outputs."
            )
        cell.outputs = [_nbformat().from_dict(dict(output)) for output in outputs]
        cell.execution_count = execution_count

    async def save(self) -> None:
        """Validate, then write with nbformat's 1-space indent via a temp file and rename."""
        notebook = await self._notebook()
        api = _nbformat()
        try:
            api.validate(notebook)
        except api.validation_error as exc:
            reason = getattr(exc, "message", str(exc))
            raise ToolExecutionError(
                f"{self.path} would not be a valid notebook after this edit: {reason}"
            ) from None
        text = api.writes(notebook)
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
        await asyncio.to_thread(atomic_write_bytes, self.path, data)

    async def _notebook(self) -> NotebookNode:
        if self._nb is None:
            self._nb = await asyncio.to_thread(load_notebook, self.path)
        return self._nb

    def _index_of(self, cells: list[NotebookNode], cell_id: str) -> int:
        for index, cell in enumerate(cells):
            if cell.get("id") == cell_id:
                return index
        raise InvalidInputError(
            f"No cell with id '{cell_id}' in {self.path}. Read the notebook to see the ids."
        )


def load_notebook(path: Path) -> NotebookNode:
    """Read a v4 notebook; older minors are upgraded to 4.5 so every cell has an id."""
    if not path.is_file():
        raise FileNotFoundGoatError(
            f"Notebook {path} does not exist. Create it with Write (notebook JSON) first, then edit it here."
        )
    try:
        text = path.read_text(encoding="utf-8")
        check_json_depth(text, str(path))  # nbformat would recurse until Python gives up
        notebook = _nbformat().reads(text, as_version=4)
    except Exception as exc:  # nbformat raises JSON, validation and version errors alike
        raise ToolExecutionError(f"{path} is not a readable Jupyter notebook: {exc}") from None
    if int(notebook.get("nbformat_minor", 0)) < 5:
        notebook = _nbformat().upgrade(notebook)
    for cell in notebook.cells:
        if not cell.get("id"):  # a 4.5 notebook saved by a careless tool
            cell["id"] = uuid.uuid4().hex[:8]
    return notebook


def _review_placeholder(cell: NotebookNode) -> bool:
    """A cell goat deleted, kept in place until the user keeps or undoes the deletion (the
    labextension's review.ts): gone, for the agent, as in the live notebook's listing."""
    metadata = cast("dict[str, Any]", cell.get("metadata") or {})
    review: object = metadata.get("goat_review")
    return isinstance(review, dict) and cast("dict[str, Any]", review).get("kind") == "deleted"


def _cell_info(cell: NotebookNode, index: int) -> CellInfo:
    outputs = cast(list[dict[str, Any]], cell.get("outputs", []))
    return CellInfo(
        id=str(cell.get("id", f"cell-{index}")),
        index=index,
        cell_type=cast(CellType, cell.cell_type),
        source=str(cell.source),
        execution_count=cast(int | None, cell.get("execution_count")),
        outputs=[dict(output) for output in outputs],
        metadata=dict(cast(dict[str, Any], cell.get("metadata", {}))),
    )
