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
    deferred = True
    search_hint = "stop a background task"
    input_model = TaskStopInput
    side_effect = "blocking"

    def title_for(self, args: TaskStopInput) -> str:
        return f"Stop {args.task_id}"

    async def run(self, args: TaskStopInput, ctx: ToolContext) -> ToolOutput | str:
        tasks = ctx.session.tasks
        task = await tasks.stop(args.task_id)
        tasks.mark_reported(task.id)
        readable = f"Its output ({task.buffer.total_chars} characters) is still readable with TaskOutput."
        if task.status != "stopped":  # it ended by itself while we were stopping it
            return f"Task {task.id} {task.status} by itself (exit code {task.exit_code}). {readable}"
        what = "its process group was killed" if task.kind == "bash" else "it was cancelled"
        return f"Stopped task {task.id} ({task.description[:120]}): {what}. {readable}"


class KillShellTool(Tool[KillShellInput]):
    """Alias kept for models trained on the older tool name."""

    name = "KillShell"
    input_model = KillShellInput
    side_effect = "blocking"
    hidden = True
    description_file = "task_stop.md"

    def title_for(self, args: KillShellInput) -> str:
        return f"Stop {args.shell_id}"

    async def run(self, args: KillShellInput, ctx: ToolContext) -> ToolOutput | str:
        return await TaskStopTool().run(TaskStopInput(task_id=args.shell_id), ctx)
