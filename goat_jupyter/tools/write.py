"""Write: create or overwrite a file atomically."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class WriteInput(ToolInput):
    file_path: str = Field(description="Path of the file to write (absolute, or relative to the cwd).")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(Tool[WriteInput]):
    name = "Write"
    input_model = WriteInput
    side_effect = "mutating"

    def title_for(self, args: WriteInput) -> str:
        return f"Write {args.file_path}"

    async def run(self, args: WriteInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Write is being built.")
