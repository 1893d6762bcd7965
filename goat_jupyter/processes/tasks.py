"""Background tasks (shell commands and subagents) shared by Bash, TaskOutput, TaskStop, Agent."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from goat_jupyter.errors import InvalidInputError, ToolExecutionError
from goat_jupyter.processes.spawn import OutputBuffer, ShellProcess, kill_group, spawn_shell

TaskStatus = Literal["running", "completed", "failed", "stopped"]
TaskKind = Literal["bash", "agent"]


@dataclass
class BackgroundTask:
    id: str
    kind: TaskKind
    description: str
    started: float = field(default_factory=time.monotonic)
    status: TaskStatus = "running"
    exit_code: int | None = None
    buffer: OutputBuffer = field(default_factory=OutputBuffer)
    finished_at: float | None = None
    runner: asyncio.Task[None] | None = None
    process: subprocess.Popen[bytes] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def output(self) -> str:
        """Everything kept so far (the start and end of very long output)."""
        return self.buffer.text()

    def append_output(self, text: str) -> None:
        self.buffer.append(text)

    @property
    def elapsed_s(self) -> float:
        return (self.finished_at or time.monotonic()) - self.started

    def finish(self, status: TaskStatus, exit_code: int | None) -> None:
        if self.status == "running":
            self.status = status
            self.exit_code = exit_code
            self.finished_at = time.monotonic()
        self.done.set()


class TaskManager:
    """Owns every background task of a session; notices of finished tasks are drained per turn."""

    def __init__(self) -> None:
        self._tasks: dict[str, BackgroundTask] = {}
        self._ids = itertools.count(1)
        self._unreported: list[str] = []

    def _new(self, kind: TaskKind, description: str) -> BackgroundTask:
        task = BackgroundTask(id=f"{kind}_{next(self._ids)}", kind=kind, description=description)
        self._tasks[task.id] = task
        return task

    async def start_shell(self, command: str, cwd: Path, description: str = "") -> BackgroundTask:
        """Run `bash -c command` in its own process group; its merged output is kept on the task."""
        task = self._new("bash", description or command)
        try:
            shell = spawn_shell(command, cwd, task.append_output)
        except BaseException:
            del self._tasks[task.id]
            raise
        task.process = shell.process
        task.runner = asyncio.ensure_future(self._watch_shell(task, shell))
        return task

    async def _watch_shell(self, task: BackgroundTask, shell: ShellProcess) -> None:
        try:
            # The task lasts until the shell exits and no process of it holds the output open.
            code = await shell.wait()
            task.finish("completed" if code == 0 else "failed", code)
        except asyncio.CancelledError:
            await shell.terminate()
            task.finish("stopped", shell.process.returncode)
        finally:
            shell.close()
            self._finished(task)

    def _finished(self, task: BackgroundTask) -> None:
        task.done.set()
        self._unreported.append(task.id)

    def start_coroutine(
        self, kind: TaskKind, description: str, work: Callable[[BackgroundTask], Awaitable[str]]
    ) -> BackgroundTask:
        """Run `work(task)` in the background; its return value becomes the task's output."""
        task = self._new(kind, description)

        async def runner() -> None:
            try:
                task.append_output(await work(task))
                task.finish("completed", 0)
            except asyncio.CancelledError:
                task.finish("stopped", None)
            except Exception as exc:  # a failing background job is reported, never raised
                task.append_output(f"{type(exc).__name__}: {exc}")
                task.finish("failed", 1)
            finally:
                self._finished(task)

        task.runner = asyncio.ensure_future(runner())
        return task

    def get(self, task_id: str) -> BackgroundTask:
        task = self._tasks.get(task_id)
        if task is None:
            known = ", ".join(self._tasks) or "none"
            raise InvalidInputError(f"No background task with id '{task_id}'. Known tasks: {known}.")
        return task

    def all(self) -> list[BackgroundTask]:
        return list(self._tasks.values())

    def running(self) -> list[BackgroundTask]:
        return [task for task in self._tasks.values() if task.status == "running"]

    async def wait(self, task_id: str, timeout_s: float) -> BackgroundTask:
        task = self.get(task_id)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(task.done.wait(), timeout_s)
        return task

    async def stop(self, task_id: str) -> BackgroundTask:
        """Cancel a running task; for a shell that kills its whole process group."""
        task = self.get(task_id)
        if task.status != "running":
            code = "" if task.exit_code is None else f", exit code {task.exit_code}"
            raise ToolExecutionError(f"Task {task_id} is not running: it already {task.status}{code}.")
        if task.runner is not None:
            task.runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task.runner
        task.finish("stopped", task.exit_code)
        return task

    async def stop_all(self) -> None:
        """Stop every running task (kernel shutdown, `%goat reset`, interrupt)."""
        # A task may finish on its own meanwhile; its ToolExecutionError is of no interest here.
        await asyncio.gather(*(self.stop(task.id) for task in self.running()), return_exceptions=True)

    def kill_all_now(self) -> None:
        """Synchronous last resort (interpreter exit): SIGKILL every running task's process group."""
        for task in self.running():
            if task.process is not None:
                kill_group(task.process)
            if task.runner is not None:
                task.runner.cancel()

    def mark_reported(self, task_id: str) -> None:
        """The model already saw this task's final state; no notice is needed for it."""
        with contextlib.suppress(ValueError):
            self._unreported.remove(task_id)

    def drain_notices(self) -> list[str]:
        """One line per task finished since the last call, for the next model turn."""
        notices: list[str] = []
        for task_id in self._unreported:
            task = self._tasks[task_id]
            code = "" if task.exit_code is None else f", exit code {task.exit_code}"
            notices.append(
                f"Background task {task.id} ({task.description[:80]}) {task.status}{code}. "
                f"Use TaskOutput with task_id '{task.id}' to read its output."
            )
        self._unreported.clear()
        return notices
