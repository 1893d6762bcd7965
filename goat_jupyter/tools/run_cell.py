"""RunCell: execute a notebook cell in this kernel and fill in its outputs."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.notebook import address_label
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


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

    async def approval_code(self, args: RunCellInput, ctx: ToolContext) -> str | None:
        """The cell's source now: "allow for session" covers that source, not the cell id."""
        kernel = ctx.services.kernel
        return None if kernel is None else await kernel.cell_source(args, ctx)

    async def run(self, args: RunCellInput, ctx: ToolContext) -> ToolOutput | str:
        kernel = required(ctx.services.kernel, "kernel", self.name)
        return await kernel.run_cell(args, ctx)
