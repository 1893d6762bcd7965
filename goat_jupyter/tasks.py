"""Background tasks (shell commands and subagents) shared by Bash, TaskOutput, TaskStop, Agent."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from goat_jupyter.errors import InvalidInputError, ToolExecutionError
from goat_jupyter.process import pump_output, spawn_shell, terminate_group

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
    chunks: list[str] = field(default_factory=lambda: list[str]())
    finished_at: float | None = None
    runner: asyncio.Task[None] | None = None
    process: asyncio.subprocess.Process | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def output(self) -> str:
        return "".join(self.chunks)

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
        task = self._new("bash", description or command)
        task.process = await spawn_shell(command, cwd)
        task.runner = asyncio.ensure_future(self._watch_process(task))
        return task

    async def _watch_process(self, task: BackgroundTask) -> None:
        assert task.process is not None
        try:
            await pump_output(task.process, task.chunks.append)
            code = await task.process.wait()
            task.finish("completed" if code == 0 else "failed", code)
        except asyncio.CancelledError:
            await terminate_group(task.process)
            task.finish("stopped", task.process.returncode)
        finally:
            self._unreported.append(task.id)

    def start_coroutine(
        self, kind: TaskKind, description: str, work: Callable[[BackgroundTask], Awaitable[str]]
    ) -> BackgroundTask:
        """Run `work(task)` in the background; its return value becomes the task's output."""
        task = self._new(kind, description)

        async def runner() -> None:
            try:
                task.chunks.append(await work(task))
                task.finish("completed", 0)
            except asyncio.CancelledError:
                task.finish("stopped", None)
            except Exception as exc:  # a failing background job is reported, never raised
                task.chunks.append(f"{type(exc).__name__}: {exc}")
                task.finish("failed", 1)
            finally:
                self._unreported.append(task.id)

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

    async def wait(self, task_id: str, timeout_s: float) -> BackgroundTask:
        task = self.get(task_id)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(task.done.wait(), timeout_s)
        return task

    async def stop(self, task_id: str) -> BackgroundTask:
        task = self.get(task_id)
        if task.status != "running":
            raise ToolExecutionError(f"Task {task_id} is not running (status: {task.status}).")
        if task.runner is not None:
            task.runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task.runner
        task.finish("stopped", task.exit_code)
        return task

    async def stop_all(self) -> None:
        for task in self.all():
            if task.status == "running":
                await self.stop(task.id)

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
