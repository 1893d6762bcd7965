"""Move: rename or move a file or directory."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class MoveInput(ToolInput):
    from_: str = Field(alias="from", description="Existing path to move.")
    to: str = Field(description="Destination path.")
    overwrite: bool = Field(default=False, description="Replace the destination if it exists.")


class MoveTool(Tool[MoveInput]):
    name = "Move"
    input_model = MoveInput
    side_effect = "mutating"

    def title_for(self, args: MoveInput) -> str:
        return f"Move {args.from_} -> {args.to}"

    async def run(self, args: MoveInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Move is being built.")
