"""TodoRead: show the session's todo list."""

from __future__ import annotations

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.conversation.todo_write import checklist, summary, todo_metadata


class TodoReadInput(ToolInput):
    pass


class TodoReadTool(Tool[TodoReadInput]):
    name = "TodoRead"
    deferred = True
    input_model = TodoReadInput
    side_effect = "read_only"

    async def run(self, args: TodoReadInput, ctx: ToolContext) -> ToolOutput | str:
        todos = list(ctx.session.todos)
        metadata = {"todos": todo_metadata(todos)}
        if not todos:
            return ToolOutput("The todo list is empty.", metadata=metadata)
        return ToolOutput(f"Todo list ({summary(todos)}):\n{checklist(todos)}", metadata=metadata)
