"""TodoWrite: replace the session's todo list."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, field_validator

from goat_jupyter.state import TodoItem
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The complete, updated todo list.")

    @field_validator("todos")
    @classmethod
    def _texts_present(cls, todos: list[TodoItem]) -> list[TodoItem]:
        for index, item in enumerate(todos):
            if not item.content.strip() or not item.activeForm.strip():
                raise ValueError(f"todo {index} needs a non-empty content and activeForm")
        return todos


def checklist(todos: Sequence[TodoItem]) -> str:
    """The list as `[x]` done, `[~]` in progress, `[ ]` pending lines."""
    return "\n".join(f"{_MARKS[item.status]} {item.content}" for item in todos)


def todo_metadata(todos: Sequence[TodoItem]) -> list[dict[str, str]]:
    return [item.model_dump() for item in todos]


def summary(todos: Sequence[TodoItem]) -> str:
    done = sum(item.status == "completed" for item in todos)
    active = sum(item.status == "in_progress" for item in todos)
    return f"{len(todos)} items: {done} completed, {active} in progress, {len(todos) - done - active} pending"


class TodoWriteTool(Tool[TodoWriteInput]):
    name = "TodoWrite"
    input_model = TodoWriteInput
    side_effect = "none"

    def title_for(self, args: TodoWriteInput) -> str:
        return f"Update todos ({len(args.todos)} items)"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolOutput | str:
        todos = [item.model_copy() for item in args.todos]
        all_done = bool(todos) and all(item.status == "completed" for item in todos)
        ctx.session.todos = [] if all_done else todos
        metadata = {"todos": todo_metadata(todos), "cleared": all_done or not todos}
        if not todos:
            return ToolOutput("Todo list cleared (it is now empty).", metadata=metadata)
        if all_done:
            text = f"All {len(todos)} todos are completed, so the list was cleared:\n{checklist(todos)}"
            return ToolOutput(text, metadata=metadata)
        text = (
            f"Todo list updated ({summary(todos)}):\n{checklist(todos)}\n\n"
            "Keep the list current: mark each item completed as soon as it is done."
        )
        return ToolOutput(text, metadata=metadata)
