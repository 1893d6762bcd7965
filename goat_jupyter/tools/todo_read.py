"""TodoRead: show the session's todo list."""

from __future__ import annotations

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class TodoReadInput(ToolInput):
    pass


class TodoReadTool(Tool[TodoReadInput]):
    name = "TodoRead"
    input_model = TodoReadInput
    side_effect = "read_only"

    async def run(self, args: TodoReadInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("TodoRead is being built.")
