"""TaskOutput (and its older name BashOutput): status and output of a background task."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class TaskOutputInput(ToolInput):
    task_id: str = Field(description="Id of the background task.")
    block: bool = Field(default=True, description="Wait for the task to finish (up to timeout).")
    timeout: int = Field(default=30_000, ge=0, le=600_000, description="How long to wait, in milliseconds.")


class BashOutputInput(ToolInput):
    bash_id: str = Field(description="Id of the background shell.")
    block: bool = Field(default=True)
    timeout: int = Field(default=30_000, ge=0, le=600_000)


class TaskOutputTool(Tool[TaskOutputInput]):
    name = "TaskOutput"
    input_model = TaskOutputInput
    side_effect = "read_only"
    max_output_chars = 30_000

    def title_for(self, args: TaskOutputInput) -> str:
        return f"Output of {args.task_id}"

    async def run(self, args: TaskOutputInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("TaskOutput is being built.")


class BashOutputTool(Tool[BashOutputInput]):
    """Alias kept for models trained on the older tool name."""

    name = "BashOutput"
    input_model = BashOutputInput
    side_effect = "read_only"
    max_output_chars = 30_000
    hidden = True
    description_file = "task_output.md"

    async def run(self, args: BashOutputInput, ctx: ToolContext) -> ToolOutput | str:
        inner = TaskOutputInput(task_id=args.bash_id, block=args.block, timeout=args.timeout)
        return await TaskOutputTool().run(inner, ctx)
