"""TodoWrite: replace the session's todo list."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.state import TodoItem
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The complete, updated todo list.")


class TodoWriteTool(Tool[TodoWriteInput]):
    name = "TodoWrite"
    input_model = TodoWriteInput
    side_effect = "none"

    def title_for(self, args: TodoWriteInput) -> str:
        return f"Update todos ({len(args.todos)} items)"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("TodoWrite is being built.")
