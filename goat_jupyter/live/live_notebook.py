"""A notebook open in JupyterLab, edited through the comm bridge (the live NotebookBackend)."""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.live.bridge import CellInfo, CellType
from goat_jupyter.live.comm_bridge import CommBridge, Message


class LiveNotebook:
    """A notebook open in JupyterLab, edited through the bridge (NotebookBackend)."""

    live = True

    def __init__(self, bridge: CommBridge, path: Path, frontend_path: str | None) -> None:
        self.path = path
        self.bridge = bridge
        self.frontend_path = frontend_path  # None: the panel that owns this kernel
        self.dirty = False
        self._cells: dict[str, CellInfo] = {}
        self._review: dict[str, bool] = {}  # `review=True` on edits: they wait for the user's Keep / Undo

    @contextmanager
    def reviewed(self) -> Generator[None]:
        """Edits made inside wait on their cells for the user's Keep / Undo (labextension review.ts)."""
        self._review = {"review": True}
        try:
            yield
        finally:
            self._review = {}

    async def list_cells(self) -> list[CellInfo]:
        reply = await self._call("list_cells")
        self.dirty = bool(reply.get("dirty"))
        raw: list[Message] = reply.get("cells") or []
        cells = [cell_from_json(cell, index) for index, cell in enumerate(raw)]
        self._cells = {cell.id: cell for cell in cells}
        return cells

    async def insert_cell(
        self,
        after_id: str | None,
        cell_type: CellType,
        source: str,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        reply = await self._call(
            "insert_cell",
            after_id=after_id,
            cell_type=cell_type,
            source=source,
            metadata=dict(metadata or {}),
            **self._review,
        )
        return str(reply.get("cell_id"))

    async def replace_cell(
        self,
        cell_id: str,
        source: str,
        *,
        cell_type: CellType | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        old = self._cells.get(cell_id) or await self._cell(cell_id)
        merged = {**old.metadata, **metadata} if metadata else None
        await self._call(
            "replace_cell",
            cell_id=cell_id,
            source=source,
            cell_type=cell_type,
            metadata=merged,
            clear_outputs=(cell_type or old.cell_type) == "code",
            **self._review,
        )

    async def restore_cell(self, cell: CellInfo) -> None:
        """Put back a cell's source, type, exact metadata and outputs (used by revert)."""
        await self._call(
            "replace_cell",
            cell_id=cell.id,
            source=cell.source,
            cell_type=cell.cell_type,
            metadata=dict(cell.metadata),
            clear_outputs=False,
        )
        if cell.cell_type == "code":
            await self.set_outputs(cell.id, cell.outputs, cell.execution_count)

    async def delete_cell(self, cell_id: str) -> None:
        await self._call("delete_cell", cell_id=cell_id, **self._review)

    async def set_outputs(
        self, cell_id: str, outputs: Sequence[Mapping[str, Any]], execution_count: int | None
    ) -> None:
        await self._call(
            "set_outputs",
            cell_id=cell_id,
            outputs=[dict(o) for o in outputs],
            execution_count=execution_count,
        )

    async def start_run(self, cell_id: str, run_id: str) -> None:
        """Show the code cell running ([*], outputs cleared) and route the kernel's IOPub messages
        whose parent is `run_id` into it, as JupyterLab does for its own execute requests."""
        await self._call("run_started", cell_id=cell_id, run_id=run_id)

    async def finish_run(
        self, cell_id: str, run_id: str, outputs: Sequence[Mapping[str, Any]], execution_count: int
    ) -> None:
        """End what `start_run` began: the final outputs and execution count, the [*] gone."""
        await self._call(
            "run_finished",
            cell_id=cell_id,
            run_id=run_id,
            outputs=[dict(o) for o in outputs],
            execution_count=execution_count,
        )

    async def save(self) -> None:
        """Nothing to do: the change is in the open notebook (dirty until the user saves it)."""

    async def persist(self) -> None:
        """Ask JupyterLab to save the notebook to disk."""
        await self._call("save")

    async def _cell(self, cell_id: str) -> CellInfo:
        await self.list_cells()
        if cell_id not in self._cells:
            raise InvalidInputError(f"No cell with id '{cell_id}' in {self.path}. Read the notebook again.")
        return self._cells[cell_id]

    async def _call(self, op: str, **args: Any) -> Message:
        return await self.bridge.request(op, path=self.frontend_path, **args)


def cell_from_json(cell: Mapping[str, Any], index: int) -> CellInfo:
    """A cell of a `list_cells` reply (source as a string or nbformat's list of lines)."""
    source: Any = cell.get("source", "")
    count: Any = cell.get("execution_count")
    return CellInfo(
        id=str(cell.get("id") or f"cell-{index}"),
        index=index,
        cell_type=cast(CellType, cell.get("cell_type", "code")),
        source="".join(cast(list[str], source)) if isinstance(source, list) else str(source),
        execution_count=count if isinstance(count, int) else None,
        outputs=[dict(o) for o in cast(list[Message], cell.get("outputs") or [])],
        metadata=dict(cast(Message, cell.get("metadata") or {})),
    )
