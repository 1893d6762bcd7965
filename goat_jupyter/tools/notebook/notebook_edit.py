"""NotebookEdit: replace, insert or delete a cell of a Jupyter notebook."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.file_lock import locked_async
from goat_jupyter.live import CellInfo, NotebookBackend, address_label, cell_label, find_cell
from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.notebook.cell_locks import address, check_at_run, checked_before
from goat_jupyter.tools.notebook.notebook_landed import Expected, echo, read_back
from goat_jupyter.tools.notebook.notebook_live import (
    check_unchanged,
    choose_backend,
    default_anchor,
    fallback_note,
    placed_below,
    remember_write,
    under_review,
)
from goat_jupyter.tools.notebook.notebook_provenance import check_tutor, goat_metadata


class NotebookEditInput(ToolInput):
    notebook_path: str = Field(description="Path of the .ipynb file.")
    cell_id: str | None = Field(
        default=None, description='Cell id, or "cell-N" for the cell at index N. Insert goes after it.'
    )
    new_source: str = Field(description="New source of the cell (ignored for delete).")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None, description="Cell type; required for insert."
    )
    edit_mode: Literal["replace", "insert", "delete"] = Field(default="replace")


class NotebookEditTool(Tool[NotebookEditInput]):
    name = "NotebookEdit"
    input_model = NotebookEditInput
    side_effect = "mutating"

    def title_for(self, args: NotebookEditInput) -> str:
        target = address_label(args.cell_id) if args.cell_id else "top"
        return f"NotebookEdit {args.edit_mode} {target} in {args.notebook_path}"

    async def precheck(self, args: NotebookEditInput, ctx: ToolContext) -> None:
        path = ctx.resolve_path(args.notebook_path)
        _check_arguments(path, args)
        backend = await choose_backend(path, ctx)
        if not backend.live:
            ctx.session.file_reads.check_writable(path)
        if args.cell_id is not None:
            target = find_cell(await backend.list_cells(), args.cell_id, where=str(path))
            if args.edit_mode != "insert":
                checked_before("edit", _address(args), target, ctx)
                check_unchanged(ctx, backend, target)
            check_tutor(ctx, target, args.edit_mode)

    async def approval_cell(self, args: NotebookEditInput, ctx: ToolContext) -> CellFacts | None:
        """The cell a replace or delete changes, as the precheck saw it (its tags, its lock)."""
        return ctx.seen_cells.get(_address(args))

    async def run(self, args: NotebookEditInput, ctx: ToolContext) -> ToolOutput | str:
        path = ctx.resolve_path(args.notebook_path)
        _check_arguments(path, args)
        backend = await choose_backend(path, ctx)
        if backend.live:
            return await self._edit(path, args, ctx, backend)
        async with locked_async(path):  # the file: no other session's write may interleave
            ctx.session.file_reads.check_writable(path)
            return await self._edit(path, args, ctx, backend)

    async def _edit(
        self, path: Path, args: NotebookEditInput, ctx: ToolContext, backend: NotebookBackend
    ) -> ToolOutput:
        cells = await backend.list_cells()
        target = None if args.cell_id is None else find_cell(cells, args.cell_id, where=str(path))
        if target is not None and args.edit_mode != "insert":
            check_at_run("edit", _address(args), target, ctx)
            check_unchanged(ctx, backend, target)
            check_tutor(ctx, target, args.edit_mode)
        below_running = args.edit_mode == "insert" and target is None
        if below_running:
            target = default_anchor(ctx, path, cells)
        stamp = goat_metadata(ctx, args.new_source)
        with under_review(ctx, backend):
            if args.edit_mode == "insert" or target is None:
                message, cell = await _insert(backend, args, target, stamp)
            elif args.edit_mode == "delete":
                message, cell = await _delete(backend, target)
            else:
                message, cell = await _replace(backend, args, target, stamp)
        await backend.save()
        new_source = None if args.edit_mode == "delete" else args.new_source
        landed = await read_back(backend, Expected(cell["cell_id"], new_source, cell["cell_type"]))
        if not backend.live:
            ctx.session.file_reads.record(path)
        remember_write(ctx, backend, cell["cell_id"], cell["cell_type"], new_source)
        if below_running and target is not None:
            placed_below(ctx, path, cell["cell_id"])
        metadata: dict[str, Any] = {
            "notebook_path": str(path),
            "edit_mode": args.edit_mode,
            "live": backend.live,
            **cell,
        }
        if landed is not None:
            metadata["cell_number"] = landed.index + 1
            message = f"{message}\n{echo(landed)}"
        return ToolOutput(message + fallback_note(ctx, backend), metadata=metadata)


def _address(args: NotebookEditInput) -> str:
    return address(args.notebook_path, args.cell_id or "")


def _check_arguments(path: Path, args: NotebookEditInput) -> None:
    if path.suffix.lower() != ".ipynb":
        raise InvalidInputError(f"{path} is not a .ipynb notebook. Use Edit for other files.")
    if args.edit_mode == "insert" and args.cell_type is None:
        raise InvalidInputError("cell_type is required for insert: give 'code' or 'markdown'.")
    if args.edit_mode != "insert" and args.cell_id is None:
        raise InvalidInputError(f"cell_id is required for {args.edit_mode}. Read the notebook to see ids.")


async def _insert(
    backend: NotebookBackend, args: NotebookEditInput, after: CellInfo | None, stamp: dict[str, Any]
) -> tuple[str, dict[str, str]]:
    cell_type = args.cell_type or "code"
    new_id = await backend.insert_cell(
        after.id if after else None, cell_type, args.new_source, metadata=stamp
    )
    place = f"after {cell_label(after)}" if after else "at the top"
    message = f"Inserted a new {cell_type} cell with id {new_id} {place} of {backend.path}."
    return message, {"cell_id": new_id, "cell_type": cell_type}


async def _delete(backend: NotebookBackend, target: CellInfo) -> tuple[str, dict[str, str]]:
    await backend.delete_cell(target.id)
    message = f"Deleted {target.cell_type} {cell_label(target)} from {backend.path}."
    return message, {"cell_id": target.id, "cell_type": target.cell_type}


async def _replace(
    backend: NotebookBackend, args: NotebookEditInput, target: CellInfo, stamp: dict[str, Any]
) -> tuple[str, dict[str, str]]:
    await backend.replace_cell(target.id, args.new_source, cell_type=args.cell_type, metadata=stamp)
    new_type = args.cell_type or target.cell_type
    message = f"Replaced the source of {cell_label(target)} in {backend.path}"
    if new_type != target.cell_type:
        message += f"; it is now a {new_type} cell (was {target.cell_type})"
    if new_type == "code":
        message += "; its outputs and execution count were cleared"
    return message + ".", {"cell_id": target.id, "cell_type": new_type}
