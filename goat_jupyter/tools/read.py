"""Read: text files with line numbers, PDFs by page, images, and notebooks cell by cell."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class ReadInput(ToolInput):
    file_path: str = Field(description="Path of the file to read (absolute, or relative to the cwd).")
    offset: int | None = Field(default=None, ge=0, description="1-based line number to start from.")
    limit: int | None = Field(default=None, ge=1, description="Number of lines to read (default 2000).")
    pages: str | None = Field(default=None, description='PDF page range such as "3", "1-5" or "10-".')


class ReadTool(Tool[ReadInput]):
    name = "Read"
    input_model = ReadInput
    side_effect = "read_only"

    def title_for(self, args: ReadInput) -> str:
        return f"Read {args.file_path}"

    async def run(self, args: ReadInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Read is being built.")
