"""TaskOutput (and its older name BashOutput): status and output of a background task."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.processes.tasks import BackgroundTask
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.shell.bash import format_duration


class TaskOutputInput(ToolInput):
    task_id: str = Field(description="Id of the background task.")
    block: bool = Field(default=True, description="Wait for the task to finish (up to timeout).")
    timeout: int = Field(default=30_000, ge=0, le=600_000, description="How long to wait, in milliseconds.")


class BashOutputInput(ToolInput):
    bash_id: str = Field(description="Id of the background shell.")
    block: bool = Field(default=True)
    timeout: int = Field(default=30_000, ge=0, le=600_000)


def describe_task(task: BackgroundTask, *, waited_ms: int | None = None) -> str:
    """Status, exit code and the output so far of one task (stored whole when large, like Bash's)."""
    status = task.status
    if status == "running" and waited_ms is not None:
        status += f" (still running after waiting {format_duration(waited_ms)})"
    header = [
        f"Task {task.id} ({task.kind}): {task.description[:200]}",
        f"Status: {status}",
        f"Exit code: {'-' if task.exit_code is None else task.exit_code}",
        f"Elapsed: {format_duration(round(task.elapsed_s * 1000))}",
    ]
    buffer = task.buffer
    header.append(f"Output so far ({buffer.total_chars} characters):")
    head = "\n".join(header)
    body = buffer.described() if buffer.total_chars else "(no output yet)"
    return f"{head}\n{body}"


class TaskOutputTool(Tool[TaskOutputInput]):
    name = "TaskOutput"
    deferred = True
    search_hint = "background task output"
    input_model = TaskOutputInput
    side_effect = "read_only"

    def title_for(self, args: TaskOutputInput) -> str:
        return f"Output of {args.task_id}"

    async def run(self, args: TaskOutputInput, ctx: ToolContext) -> ToolOutput | str:
        tasks = ctx.session.tasks
        task = tasks.get(args.task_id)
        waited: int | None = None
        if args.block and task.status == "running":
            await tasks.wait(task.id, args.timeout / 1000)
            waited = args.timeout
        if task.status != "running":
            tasks.mark_reported(task.id)
        return describe_task(task, waited_ms=waited)


class BashOutputTool(Tool[BashOutputInput]):
    """Alias kept for models trained on the older tool name."""

    name = "BashOutput"
    input_model = BashOutputInput
    side_effect = "read_only"
    hidden = True
    description_file = "task_output.md"

    def title_for(self, args: BashOutputInput) -> str:
        return f"Output of {args.bash_id}"

    async def run(self, args: BashOutputInput, ctx: ToolContext) -> ToolOutput | str:
        inner = TaskOutputInput(task_id=args.bash_id, block=args.block, timeout=args.timeout)
        return await TaskOutputTool().run(inner, ctx)
