"""Edit: exact string replacement in a file."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class EditInput(ToolInput):
    file_path: str = Field(description="Path of the file to change.")
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


class EditTool(Tool[EditInput]):
    name = "Edit"
    input_model = EditInput
    side_effect = "mutating"

    def title_for(self, args: EditInput) -> str:
        return f"Edit {args.file_path}"

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Edit is being built.")
