"""RunCell: execute a notebook cell in this kernel and fill in its outputs."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.live import address_label
from goat_jupyter.permissions.cell_tags import CellFacts
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.tools.notebook.cell_locks import address, checked_before, facts_of


class RunCellInput(ToolInput):
    notebook_path: str | None = Field(default=None, description="Notebook (default: the one running goat).")
    cell_id: str = Field(description='Cell id, or "cell-N" for index N.')


class RunCellTool(Tool[RunCellInput]):
    name = "RunCell"
    input_model = RunCellInput
    side_effect = "mutating"
    max_output_chars = 30_000

    def title_for(self, args: RunCellInput) -> str:
        return f"Run {address_label(args.cell_id)}"

    async def precheck(self, args: RunCellInput, ctx: ToolContext) -> None:
        """Looks the cell up once: a `goat:no-run` cell is refused here, in every mode."""
        kernel = ctx.services.kernel
        if kernel is not None:
            cell = await kernel.target_cell(args, ctx)
            checked_before("run", address(args.notebook_path, args.cell_id), cell, ctx)

    async def approval_cell(self, args: RunCellInput, ctx: ToolContext) -> CellFacts | None:
        """The cell as the precheck saw it: its source ("allow for session" covers that source, not
        the cell id) and its tags (tag rules, locks)."""
        seen = ctx.seen_cells.get(address(args.notebook_path, args.cell_id))
        kernel = ctx.services.kernel
        if seen is not None or kernel is None:
            return seen
        return facts_of(await kernel.target_cell(args, ctx))

    async def approval_code(self, args: RunCellInput, ctx: ToolContext) -> str | None:
        cell = await self.approval_cell(args, ctx)
        return None if cell is None else cell.source

    async def run(self, args: RunCellInput, ctx: ToolContext) -> ToolOutput | str:
        kernel = required(ctx.services.kernel, "kernel", self.name)
        return await kernel.run_cell(args, ctx)
