"""Reverting one run's changes, newest first, leaving alone whatever changed after the run."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from goat_jupyter.checkpoints.changes import CellChange, Change, FileChange, MoveChange, RevertReport
from goat_jupyter.checkpoints.files import fingerprint, restore
from goat_jupyter.checkpoints.namespace import NamespaceChange, merge, restore_namespace
from goat_jupyter.live import CellInfo, FileNotebook, NotebookBackend
from goat_jupyter.live.live_notebook import LiveNotebook
from goat_jupyter.live.select import NotebookService, cell_hash


def describe(change: Change) -> str:
    if isinstance(change, FileChange):
        return str(change.path)
    if isinstance(change, MoveChange):
        return f"{change.source} -> {change.target}"
    if isinstance(change, NamespaceChange):
        return f"kernel variables of {change.label}"
    return f"cell {change.cell_id} of {change.notebook.name}"


class Reverter:
    """Applies one run's reverse changes; keeps live notebook backends and re-inserted cell ids."""

    def __init__(self, service: NotebookService | None, report: RevertReport) -> None:
        self.service = service
        self.report = report
        self.backends: dict[Path, NotebookBackend] = {}
        self.new_ids: dict[str, str] = {}

    async def revert(self, change: Change) -> None:
        if isinstance(change, FileChange):
            self._file(change)
        elif isinstance(change, MoveChange):
            self._move(change)
        elif isinstance(change, NamespaceChange):
            return  # all of a run's at once: `namespace`
        else:
            await self._cell(change, await self._backend(change.notebook))

    async def save(self) -> None:
        for backend in self.backends.values():
            await backend.save()

    def _file(self, change: FileChange) -> None:
        if change.before.kind == "too_large":
            self.report.skipped.append(f"{change.path}: too large to keep a copy, not restored")
        elif fingerprint(change.path) != change.after:
            self.report.skipped.append(f"{change.path}: changed after the run, left as is")
        else:
            restore(change.path, change.before)
            verb = "removed" if change.before.kind == "absent" else "restored"
            self.report.done.append(f"{verb} {change.path}")

    def namespace(self, changes: list[NamespaceChange]) -> None:
        """The kernel variables the run's RunCell / KernelInspect calls changed, back as before the run."""
        merged = merge(changes)
        if merged is None:
            return
        outcome = restore_namespace(merged)
        self.report.done.extend(outcome.restored)
        self.report.skipped.extend(outcome.left)
        self.report.not_undone.extend(outcome.not_restored)

    def _move(self, change: MoveChange) -> None:
        if os.path.lexists(change.source) or fingerprint(change.target) != change.after:
            self.report.skipped.append(f"{describe(change)}: changed after the run, not moved back")
            return
        shutil.move(change.target, change.source)
        if change.target_before.kind not in ("absent", "too_large"):
            restore(change.target, change.target_before)
        self.report.done.append(f"moved {change.target} back to {change.source}")

    async def _backend(self, notebook: Path) -> NotebookBackend:
        if notebook not in self.backends:
            service = self.service
            self.backends[notebook] = (
                FileNotebook(notebook) if service is None else await service.backend_for(notebook)
            )
        return self.backends[notebook]

    async def _cell(self, change: CellChange, backend: NotebookBackend) -> None:
        cells = await backend.list_cells()
        cell_id = self.new_ids.get(change.cell_id, change.cell_id)
        current = next((cell for cell in cells if cell.id == cell_id), None)
        if change.kind == "delete":
            if current is None:
                await self._reinsert(change, backend, cells)
            return
        if current is None:
            if change.kind != "insert":
                self.report.skipped.append(f"cell {cell_id}: no longer in {change.notebook.name}")
            return
        await self._restore(change, backend, current)

    async def _restore(self, change: CellChange, backend: NotebookBackend, current: CellInfo) -> None:
        before, now = change.before, cell_hash(current.cell_type, current.source)
        if change.kind == "outputs":
            if before is not None and (current.cell_type, current.source) == (
                before.cell_type,
                before.source,
            ):
                await backend.set_outputs(current.id, before.outputs, before.execution_count)
                self.report.done.append(f"restored the outputs of cell {current.id}")
            return
        if now != change.after:
            self.report.skipped.append(f"cell {current.id}: edited after the run, left as is")
        elif change.kind == "insert":
            await backend.delete_cell(current.id)
            self.report.done.append(f"removed cell {current.id} (inserted by the run)")
        elif before is not None:
            await restore_cell(backend, dataclasses.replace(before, id=current.id))
            self.report.done.append(f"restored cell {current.id}")

    async def _reinsert(self, change: CellChange, backend: NotebookBackend, cells: list[CellInfo]) -> None:
        before = change.before
        assert before is not None
        ids = {cell.id for cell in cells}
        anchor = self.new_ids.get(change.previous_id or "", change.previous_id)
        if anchor not in ids:
            anchor = cells[min(before.index, len(cells)) - 1].id if before.index > 0 and cells else None
        new_id = await backend.insert_cell(anchor, before.cell_type, before.source, metadata=before.metadata)
        if before.cell_type == "code" and before.outputs:
            await backend.set_outputs(new_id, before.outputs, before.execution_count)
        self.new_ids[before.id] = new_id
        self.report.done.append(f"restored deleted cell {before.id} (its id is now {new_id})")


async def restore_cell(backend: NotebookBackend, cell: CellInfo) -> None:
    """Source, type, metadata and outputs back as they were."""
    if isinstance(backend, LiveNotebook):
        await backend.restore_cell(cell)
        return
    await backend.replace_cell(cell.id, cell.source, cell_type=cell.cell_type, metadata=cell.metadata)
    if cell.cell_type == "code":
        await backend.set_outputs(cell.id, cell.outputs, cell.execution_count)
