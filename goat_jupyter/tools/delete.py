"""Delete: remove a file or directory."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class DeleteInput(ToolInput):
    path: str = Field(description="File or directory to delete.")
    recursive: bool = Field(default=False, description="Required to delete a non-empty directory.")


class DeleteTool(Tool[DeleteInput]):
    name = "Delete"
    input_model = DeleteInput
    side_effect = "mutating"

    def title_for(self, args: DeleteInput) -> str:
        return f"Delete {args.path}"

    async def run(self, args: DeleteInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Delete is being built.")
