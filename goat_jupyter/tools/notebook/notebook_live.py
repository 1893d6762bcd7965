"""The notebook tools' side of the live bridge: backend choice, live reads, conflicts."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from goat_jupyter.live import CellInfo, FileNotebook, NotebookBackend
from goat_jupyter.live.live_notebook import LiveNotebook
from goat_jupyter.live.select import NotebookService
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.notebook.notebook_view import render_notebook


def notebook_service(ctx: ToolContext) -> NotebookService | None:
    return ctx.services.bridge


async def choose_backend(path: Path, ctx: ToolContext) -> NotebookBackend:
    """The live notebook when JupyterLab has `path` open (and the bridge answers), else the file."""
    service = notebook_service(ctx)
    if service is None:
        return FileNotebook(path)
    return await service.backend_for(path)


def under_review(ctx: ToolContext, backend: NotebookBackend) -> AbstractContextManager[None]:
    """With `review_edits` on, a live edit waits on its cell for the user's Keep / Undo."""
    if isinstance(backend, LiveNotebook) and ctx.session.settings.review_edits:
        return backend.reviewed()
    return nullcontext()


def fallback_note(ctx: ToolContext, backend: NotebookBackend) -> str:
    """Said in the result when the file on disk was edited only because no frontend answered (once
    per conversation: the model keeps it in its history, the user was told by a notice)."""
    service = notebook_service(ctx)
    reason = None if service is None or backend.live else service.fallback_reason
    if service is None or not reason or ctx.session.session_id in service.fallback_told:
        return ""
    service.fallback_told.add(ctx.session.session_id)
    return (
        f"\nThis edited {backend.path} on disk, not the live notebook: the live bridge is not available "
        f"({reason}). If the notebook is open in JupyterLab, the user must use File > Reload Notebook "
        "from Disk to see it, and saving before that would overwrite it."
    )


async def resolve_notebook(raw: str | None, ctx: ToolContext) -> Path | None:
    """The notebook a tool names, or by default the one this kernel belongs to (None if unknown)."""
    if raw:
        return ctx.resolve_path(raw)
    service = notebook_service(ctx)
    owner = None if service is None else await service.owner_path()
    return owner or ctx.session.notebook_path


async def read_live_notebook(path: Path, ctx: ToolContext) -> ToolOutput | None:
    """Read's result for a notebook open in JupyterLab (unsaved state); None when it is not open."""
    service = notebook_service(ctx)
    backend = None if service is None else await service.backend_for(path)
    if service is None or not isinstance(backend, LiveNotebook):
        return None
    cells = await backend.list_cells()
    service.reads.record(ctx.session.session_id, path, cells)
    own = backend.frontend_path is None
    notebook = {
        "cells": [cell_json(cell) for cell in cells],
        "metadata": {"language_info": {"name": "python"}} if own else {},
    }
    view = render_notebook(notebook, path=None, kernel=kernel_states(ctx, cells) if own else None)
    state = "with unsaved changes" if backend.dirty else "saved"
    head = f"{path} is open in JupyterLab; this is its live state ({state})."
    text = view.text.replace("Notebook (live):", "Notebook:", 1)
    meta = {"path": str(path), "cell_count": view.cell_count, "live": True, "dirty": backend.dirty}
    return ToolOutput(f"{head}\n{text}", metadata=meta, attachments=view.attachments)


def kernel_states(ctx: ToolContext, cells: list[CellInfo]) -> dict[str, str] | None:
    """Per code cell, what the kernel ran of it (None before goat saw any execution)."""
    log = ctx.services.executions
    if log is None or not log.records:
        return None
    return {state.cell.id: state.describe() for state in log.states(cells)}


def cell_json(cell: CellInfo) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": cell.id,
        "cell_type": cell.cell_type,
        "source": cell.source,
        "metadata": cell.metadata,
    }
    if cell.cell_type == "code":
        data["outputs"] = cell.outputs
        data["execution_count"] = cell.execution_count
    return data


def check_unchanged(ctx: ToolContext, backend: NotebookBackend, cell: CellInfo) -> None:
    """CONFLICT when a live cell differs from what the agent last read (the user edited it)."""
    service = notebook_service(ctx)
    if service is not None and backend.live:
        service.reads.check(ctx.session.session_id, backend.path, cell)


def remember_write(
    ctx: ToolContext, backend: NotebookBackend, cell_id: str, cell_type: str, source: str | None
) -> None:
    """The agent's own change is not a conflict next time (None: the cell was deleted)."""
    service = notebook_service(ctx)
    if service is not None and backend.live:
        service.reads.wrote(ctx.session.session_id, backend.path, cell_id, cell_type, source)


def default_anchor(ctx: ToolContext, path: Path, cells: list[CellInfo]) -> CellInfo | None:
    """The cell an insert without cell_id follows: below the running %%goat cell when it is here."""
    service = notebook_service(ctx)
    return None if service is None else service.default_anchor(path, cells)


def placed_below(ctx: ToolContext, path: Path, cell_id: str) -> None:
    service = notebook_service(ctx)
    if service is not None:
        service.placed_below(path, cell_id)
