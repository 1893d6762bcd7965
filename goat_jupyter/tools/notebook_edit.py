"""NotebookEdit: replace, insert or delete a cell of a Jupyter notebook."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


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
        target = args.cell_id or "top"
        return f"NotebookEdit {args.edit_mode} {target} in {args.notebook_path}"

    async def run(self, args: NotebookEditInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("NotebookEdit is being built.")
