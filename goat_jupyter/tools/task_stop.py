"""TaskStop (and its older name KillShell): stop a running background task."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class TaskStopInput(ToolInput):
    task_id: str = Field(description="Id of the background task to stop.")


class KillShellInput(ToolInput):
    shell_id: str = Field(description="Id of the background shell to stop.")


class TaskStopTool(Tool[TaskStopInput]):
    name = "TaskStop"
    input_model = TaskStopInput
    side_effect = "blocking"

    def title_for(self, args: TaskStopInput) -> str:
        return f"Stop {args.task_id}"

    async def run(self, args: TaskStopInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("TaskStop is being built.")


class KillShellTool(Tool[KillShellInput]):
    """Alias kept for models trained on the older tool name."""

    name = "KillShell"
    input_model = KillShellInput
    side_effect = "blocking"
    hidden = True
    description_file = "task_stop.md"

    async def run(self, args: KillShellInput, ctx: ToolContext) -> ToolOutput | str:
        return await TaskStopTool().run(TaskStopInput(task_id=args.shell_id), ctx)
