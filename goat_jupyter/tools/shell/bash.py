"""Bash: run a shell command in the session's working directory."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import ToolExecutionError, ToolTimeoutError
from goat_jupyter.permissions.shell import last_command_name
from goat_jupyter.processes.spawn import OutputBuffer, ShellProcess, describe_exit, spawn_shell
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DRAIN_GRACE_S = 0.25  # how long output may still arrive after the shell itself exited

# Exit code 1 of these, as the last command, is an answer ("no match", "differs", "false"), not a failure.
EXIT_ONE_MEANINGS = {
    "grep": "no line matched",
    "rg": "no line matched",
    "diff": "the inputs differ",
    "test": "the condition is false",
    "[": "the condition is false",
    "find": "some paths could not be visited",
}


class BashInput(ToolInput):
    command: str = Field(description="The shell command to run with bash -c.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
    )
    description: str | None = Field(default=None, description="What the command does, in 5-10 words.")
    run_in_background: bool = Field(
        default=False, description="Start it as a background task and return its id at once."
    )


def exit_one_meaning(command: str, code: int) -> str | None:
    """Why a non-zero exit is not an error for this command, or None when it is one."""
    if code != 1:
        return None
    name = last_command_name(command)  # parsed: `diff <(a) <(b) > out` ends in diff
    return EXIT_ONE_MEANINGS.get(name) if name else None


def format_duration(ms: int) -> str:
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:g} s"
    return f"{seconds / 60:g} min" if seconds % 60 == 0 else f"{seconds:.0f} s"


class BashTool(Tool[BashInput]):
    name = "Bash"
    input_model = BashInput
    side_effect = "mutating"

    def title_for(self, args: BashInput) -> str:
        if args.description:
            return args.description
        lines = args.command.strip().splitlines()
        return lines[0][:120] if lines else "Bash"

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolOutput | str:
        notes: list[str] = []
        cwd = _usable_cwd(ctx, notes)
        if args.run_in_background:
            return await self._start_background(args, ctx, cwd, notes)
        timeout_ms = min(args.timeout or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        buffer = OutputBuffer()

        def on_output(text: str) -> None:
            buffer.append(text)
            ctx.progress(output=text)

        try:
            shell = spawn_shell(args.command, cwd, on_output, report_cwd=True)
        except OSError as exc:
            raise ToolExecutionError(f"Could not start bash in {cwd}: {exc}") from None
        code = await _wait(shell, timeout_ms, buffer)
        final_cwd = shell.final_cwd()
        _finish_output(shell, notes)
        if code != 0:
            return _finish_failed(args.command, code, buffer, notes)
        _follow_cwd(ctx, cwd, final_cwd, notes)
        return _with_notes(buffer, notes)

    async def _start_background(self, args: BashInput, ctx: ToolContext, cwd: Path, notes: list[str]) -> str:
        try:
            task = await ctx.session.tasks.start_shell(args.command, cwd, args.description or "")
        except OSError as exc:
            raise ToolExecutionError(f"Could not start bash in {cwd}: {exc}") from None
        notes.append(
            f"Started background task {task.id} in {cwd}. Read its output with TaskOutput "
            f"(task_id '{task.id}') and stop it with TaskStop; you will get a notice when it finishes."
        )
        return "\n".join(notes)


async def _wait(shell: ShellProcess, timeout_ms: int, buffer: OutputBuffer) -> int:
    """The shell's exit code; on timeout or interrupt the whole process group is killed first."""
    try:
        return await asyncio.wait_for(shell.wait(DRAIN_GRACE_S), timeout_ms / 1000)
    except asyncio.TimeoutError:
        await shell.terminate()
        message = (
            f"Command timed out after {format_duration(timeout_ms)} and was killed {_killed_what(shell)}"
        )
        raise ToolTimeoutError(message, output=_error_body(buffer)) from None
    except asyncio.CancelledError:
        shell.kill()
        raise


def _killed_what(shell: ShellProcess) -> str:
    """What the kill reached: with a cgroup everything; without, what carried goat's env marker."""
    if shell.owner.cgroup is not None:
        return "together with every process it started. Output before the timeout:"
    return (
        "together with every process it started that kept goat's environment marker (one that both "
        "detached and cleared its environment, e.g. `env -i`, cannot be found without a cgroup). "
        "Output before the timeout:"
    )


def _error_body(buffer: OutputBuffer, notes: list[str] | None = None) -> str:
    """The output (or a placeholder) after an error message; the executor bounds the whole."""
    suffix = "\n\n" + "\n".join(notes) if notes else ""
    body = buffer.described().rstrip("\n") if buffer.total_chars else "(no output)"
    return body + suffix


def _finish_failed(command: str, code: int, buffer: OutputBuffer, notes: list[str]) -> str:
    meaning = exit_one_meaning(command, code)
    if meaning is None:
        message = f"Command failed with {describe_exit(code)}."
        raise ToolExecutionError(message, output=_error_body(buffer, notes))
    notes.append(f"(exit code 1: {meaning}; not an error)")
    return _with_notes(buffer, notes)


def _finish_output(shell: ShellProcess, notes: list[str]) -> None:
    """Stop reading, unless processes started with `&` still hold the output open."""
    if shell.output_closed or not shell.group_alive():
        shell.close()
        return
    shell.detach_output()
    notes.append(
        f"Processes this command started in the background are still running (process group "
        f"{shell.pid}: `kill -- -{shell.pid}` stops those still in it); their further output is "
        "discarded, and `%goat reset` or the kernel's end stops them all. Use run_in_background to keep "
        "a command's output."
    )


def _with_notes(buffer: OutputBuffer, notes: list[str]) -> str:
    suffix = "\n".join(notes)
    if not suffix:
        return buffer.described()
    body = buffer.described().rstrip("\n")
    return f"{body}\n\n{suffix}" if body else suffix


def _usable_cwd(ctx: ToolContext, notes: list[str]) -> Path:
    """The session's working directory, or the workspace when that directory has disappeared."""
    if ctx.cwd.is_dir():
        return ctx.cwd
    notes.append(f"The working directory {ctx.cwd} no longer exists; the command ran in {ctx.workspace}.")
    ctx.session.cwd = ctx.workspace
    return ctx.workspace


def _follow_cwd(ctx: ToolContext, started_in: Path, final: Path | None, notes: list[str]) -> None:
    """Keep a `cd` for later calls, but never leave the workspace."""
    if final is None or final == started_in.resolve():
        return
    real_workspace = ctx.workspace.resolve()
    if final == real_workspace or real_workspace in final.parents:
        ctx.session.cwd = ctx.workspace / final.relative_to(real_workspace)
        return
    ctx.session.cwd = ctx.workspace
    notes.append(
        f"The command ended in {final}, which is outside the workspace; the working directory was "
        f"reset to {ctx.workspace}."
    )
