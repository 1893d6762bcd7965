"""Per-%%goat-run checkpoints: before-images of the files and live cells a run changes, and revert.

The executor calls `before_tool` right before a tool runs and `after_tool` right after (the one
hook, through `services.checkpoints`). File tools keep the before-image of their paths; live
notebook tools keep the cells as they were. Reverting walks the run's changes backwards and
leaves alone anything changed after the run, saying so.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from goat_jupyter.checkpoints.changes import CellChange as CellChange
from goat_jupyter.checkpoints.changes import Change as Change
from goat_jupyter.checkpoints.changes import FileChange as FileChange
from goat_jupyter.checkpoints.changes import MoveChange as MoveChange
from goat_jupyter.checkpoints.changes import RevertReport as RevertReport
from goat_jupyter.checkpoints.changes import RunCheckpoint as RunCheckpoint
from goat_jupyter.checkpoints.files import PathState, capture, fingerprint
from goat_jupyter.checkpoints.namespace import NamespaceChange
from goat_jupyter.live import CellInfo, find_cell
from goat_jupyter.live.select import NotebookService, cell_hash
from goat_jupyter.permissions.point import CallTool
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.notebook import choose_backend, resolve_notebook

FILE_FIELDS = {"Write": "file_path", "Edit": "file_path", "Delete": "path"}
NOT_UNDOABLE_WHY = {
    "Bash": "shell commands' effects cannot be undone",
    "RunCode": "effects of code run in the sandbox cannot be undone",
    "RunCell": "files it wrote, network calls, objects changed through functions it called and "
    "anything else outside the kernel's variables stay",
    "KernelInspect": "files it wrote, network calls and anything outside the kernel's variables stay",
}
# Kernel code may have written files or called out; whether it did is unknown, so not a known loss.
CAVEAT_TOOLS = frozenset({"RunCell", "KernelInspect"})
DID_NOT_RUN = {"INVALID_INPUT", "INVALID_PATH", "PERMISSION_DENIED", "UNKNOWN_TOOL"}
_log = logging.getLogger(__name__)


@dataclass
class Pending:
    """A tool call between `before_tool` and `after_tool`."""

    run: RunCheckpoint
    tool: str
    title: str
    args: BaseModel
    states: dict[Path, PathState] = field(default_factory=lambda: dict[Path, PathState]())
    move: tuple[Path, Path] | None = None
    notebook: Path | None = None
    listing: list[CellInfo] = field(default_factory=lambda: list[CellInfo]())
    side_effect: str = "mutating"
    unsaved: bool = False  # the before-image could not be taken


class Checkpoints:
    """The "checkpoints" service: one RunCheckpoint per %%goat run, newest last."""

    def __init__(self) -> None:
        self.runs: list[RunCheckpoint] = []
        self.current: RunCheckpoint | None = None

    def begin(self, label: str) -> RunCheckpoint:
        self.current = RunCheckpoint(len(self.runs) + 1, label)
        self.runs.append(self.current)
        return self.current

    def end(self) -> None:
        self.current = None

    def keep(self, change: NamespaceChange) -> None:
        """The kernel variables a RunCell / KernelInspect call may change (kernel/namespace_undo.py)."""
        if self.current is not None:
            self.current.changes.append(change)

    def copy_budget_left(self, budget_bytes: int) -> int:
        """What the current run may still copy of objects its code may change in place."""
        used = self.current.copied_bytes if self.current is not None else 0
        return max(0, budget_bytes - used)

    def last_revertible(self) -> RunCheckpoint | None:
        return next((run for run in reversed(self.runs) if run.changed and not run.reverted), None)

    async def before_tool(self, tool: CallTool, args: BaseModel, ctx: ToolContext) -> Pending | None:
        run = self.current
        if run is None or tool.side_effect in ("read_only", "none"):
            return None
        pending = Pending(run, tool.name, tool.title_for(args), args, side_effect=tool.side_effect)
        try:
            await self._snapshot(pending, ctx)
        except Exception:  # a checkpoint problem must never stop the tool
            _log.exception("goat: could not snapshot before %s", tool.name)
            pending.unsaved = True
        return pending

    async def after_tool(self, pending: Pending | None, output: ToolOutput) -> None:
        if pending is None or output.error_code in DID_NOT_RUN:
            return
        try:
            self._settle(pending, output)
        except Exception:
            _log.exception("goat: could not record the changes of %s", pending.tool)

    async def _snapshot(self, pending: Pending, ctx: ToolContext) -> None:
        args, budget = pending.args, pending.run.budget
        if pending.tool in FILE_FIELDS:
            path = ctx.resolve_path(str(getattr(args, FILE_FIELDS[pending.tool])))
            pending.states[path] = capture(path, budget)
        elif pending.tool == "Move":
            source = ctx.resolve_path(str(getattr(args, "from_")))  # noqa: B009 - any ToolInput
            target = ctx.resolve_path(str(getattr(args, "to")))  # noqa: B009
            pending.move = (source, target)
            pending.states[target] = capture(target, budget)
        elif pending.tool in ("NotebookEdit", "RunCell"):
            path = await resolve_notebook(getattr(args, "notebook_path", None), ctx)
            if path is None:
                return
            backend = await choose_backend(path, ctx)
            if backend.live:
                pending.notebook, pending.listing = path, await backend.list_cells()
            else:
                pending.states[path] = capture(path, budget)

    def _settle(self, pending: Pending, output: ToolOutput) -> None:
        run = pending.run
        for path, before in pending.states.items():
            after = fingerprint(path)
            if pending.move is None and after != before.fingerprint:
                run.changes.append(FileChange(path, before, after))
        if pending.move is not None:
            source, target = pending.move
            if not os.path.lexists(source) and os.path.lexists(target):
                run.changes.append(MoveChange(source, target, pending.states[target], fingerprint(target)))
        if pending.notebook is not None:
            change = cell_change(pending, output)
            if change is not None:
                run.changes.append(change)
        note = undo_note(pending)
        if note is not None:
            (run.caveats if pending.tool in CAVEAT_TOOLS and not pending.unsaved else run.not_undone).append(
                note
            )

    async def revert(self, run: RunCheckpoint, service: NotebookService | None) -> RevertReport:
        """Undo the run's changes, newest first; never overwrite what changed after the run."""
        from goat_jupyter.checkpoints.revert import Reverter, describe

        report = RevertReport(run, not_undone=list(run.not_undone), caveats=list(run.caveats))
        reverter = Reverter(service, report)
        for change in reversed(run.changes):
            try:
                await reverter.revert(change)
            except Exception as exc:  # one failure must not stop the rest
                report.skipped.append(f"{describe(change)}: could not be restored ({exc})")
        reverter.namespace([c for c in run.changes if isinstance(c, NamespaceChange)])
        await reverter.save()
        run.reverted = True
        return report


def undo_note(pending: Pending) -> str | None:
    """Why (part of) this call cannot be reverted, or None when it can be, or changed nothing."""
    label = pending.title if pending.title.startswith(pending.tool) else f"{pending.tool}: {pending.title}"
    if pending.unsaved:
        return f"{label} (no copy could be kept before it ran)"
    why = NOT_UNDOABLE_WHY.get(pending.tool)
    if why is None and pending.tool not in (*FILE_FIELDS, "Move", "NotebookEdit"):
        sending = pending.side_effect == "network" and str(getattr(pending.args, "method", "GET")) != "GET"
        if pending.side_effect in ("mutating", "spawns") or sending:
            why = "its effects cannot be undone"
    return None if why is None else f"{label} ({why})"


def cell_change(pending: Pending, output: ToolOutput) -> CellChange | None:
    """The live-cell change a NotebookEdit or RunCell call made, from its result and the before-listing."""
    notebook, listing, meta = pending.notebook, pending.listing, output.metadata
    assert notebook is not None
    if pending.tool == "RunCell":
        if output.error_code not in (None, "EXECUTION_ERROR"):
            return None
        cell = find_cell(listing, str(getattr(pending.args, "cell_id", "")))
        return CellChange(notebook, "outputs", cell.id, before=cell)
    if output.is_error:
        return None
    by_id = {cell.id: cell for cell in listing}
    cell_id, mode = str(meta["cell_id"]), str(meta["edit_mode"])
    after = cell_hash(str(meta["cell_type"]), str(getattr(pending.args, "new_source", "")))
    if mode == "insert":
        return CellChange(notebook, "insert", cell_id, after=after)
    before = by_id[cell_id]
    if mode == "replace":
        return CellChange(notebook, "replace", cell_id, before=before, after=after)
    previous = listing[before.index - 1].id if before.index > 0 else None
    return CellChange(notebook, "delete", cell_id, before=before, previous_id=previous)
