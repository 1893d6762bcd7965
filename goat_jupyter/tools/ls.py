"""LS: list a directory with types, sizes and modification times."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class LSInput(ToolInput):
    path: str = Field(default=".", description="Directory to list (default: the cwd).")
    recursive: bool = Field(default=False, description="List subdirectories too.")
    include_hidden: bool = Field(default=False, description="Include entries whose name starts with '.'.")


class LSTool(Tool[LSInput]):
    name = "LS"
    input_model = LSInput
    side_effect = "read_only"

    def title_for(self, args: LSInput) -> str:
        return f"List {args.path}"

    async def run(self, args: LSInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("LS is being built.")
