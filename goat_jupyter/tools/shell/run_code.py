"""RunCode: run a Python or bash snippet in a sandboxed subprocess (not in the kernel)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import Field

from goat_jupyter.errors import ToolExecutionError, ToolTimeoutError
from goat_jupyter.processes.limits import MAX_PROCESSES, limits_for
from goat_jupyter.processes.owner import Owner
from goat_jupyter.processes.sandbox import (
    BASE_PATH,
    Isolation,
    SandboxSpec,
    applied,
    bwrap_argv,
    isolation,
    sandbox_env,
)
from goat_jupyter.processes.sandbox_guard import Snapshot, bind_args, remove_left_behind, take_snapshot
from goat_jupyter.processes.seccomp import filter_fd, unix_socket_filter
from goat_jupyter.processes.spawn import GroupProcess, OutputBuffer, describe_exit
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.shell.bash import DRAIN_GRACE_S


class RunCodeInput(ToolInput):
    language: Literal["python", "bash"] = Field(description="Language of the code.")
    code: str = Field(description="The program text.")
    args: list[str] | None = Field(default=None, description="Command-line arguments for the program.")
    env: dict[str, str] | None = Field(default=None, description="Extra environment variables.")
    timeout: int = Field(default=60, ge=1, le=600, description="Wall-clock limit in seconds.")
    network: bool = Field(
        default=False, description="Give the program network access (the user must approve it each time)."
    )


def program_argv(args: RunCodeInput) -> list[str]:
    if args.language == "python":
        return [sys.executable, "-c", args.code, *(args.args or [])]
    return ["bash", "-c", args.code, "bash", *(args.args or [])]


@dataclass
class Launch:
    """Everything one run needs before it starts: the command line, its environment, its cgroup."""

    argv: list[str]
    env: dict[str, str]
    owner: Owner
    applied: str
    pass_fds: tuple[int, ...] = ()
    snapshot: Snapshot | None = None  # the protected entries before the run (sandboxed runs)
    cleaned: bool = False  # what the program left at protected paths is removed already

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def prepare(args: RunCodeInput, workspace: Path, iso: Isolation, snapshot: Snapshot | None = None) -> Launch:
    """The sandboxed command (or, without isolation, the bare one under the same limits).
    `snapshot`: the workspace's protected entries, taken when none is given."""
    owner = Owner.new(max_pids=MAX_PROCESSES)
    capped = owner.cgroup is not None
    limits = limits_for(args.timeout, capped)
    env = sandbox_env(args.env)
    if not iso.isolated:
        env["HOME"] = str(workspace)  # no private home exists outside a sandbox
    spec = SandboxSpec(workspace, env, limits, args.network)
    if iso.bwrap is None:
        return Launch(limits.wrap(program_argv(args)), env, owner, applied(iso, spec, None, False))
    snapshot = snapshot or take_snapshot(workspace)
    spec = replace(spec, protect=tuple(bind_args(snapshot)))
    program = unix_socket_filter(block_unix=not args.network)
    fds = (filter_fd(program),) if program is not None else ()
    argv = bwrap_argv(iso.bwrap, spec, program_argv(args), fds[0] if fds else None)
    report = applied(iso, spec, MAX_PROCESSES if capped else None, bool(fds) and not args.network)
    return Launch(argv, {"PATH": BASE_PATH}, owner, report, fds, snapshot)


@dataclass
class _Run:
    """What the program printed and how it ended, for the result layout."""

    args: RunCodeInput
    applied: str
    stdout: OutputBuffer
    stderr: OutputBuffer
    started: float
    status: str = ""
    duration_ms: int = 0

    def ended(self, status: str) -> None:
        self.status = status
        self.duration_ms = round((time.perf_counter() - self.started) * 1000)

    def report(self, workspace: str) -> str:
        header = "\n".join(
            [
                f"Exit: {self.status}",
                f"Duration: {self.duration_ms} ms",
                f"Working directory: {workspace}",
                self.applied,
            ]
        )
        stdout = self.stdout.described() if self.stdout.total_chars else "(empty)"  # stored whole when large
        stderr = self.stderr.described() if self.stderr.total_chars else "(empty)"
        return f"{header}\n\n--- stdout ---\n{stdout.rstrip()}\n\n--- stderr ---\n{stderr.rstrip()}"


class RunCodeTool(Tool[RunCodeInput]):
    name = "RunCode"
    deferred = True
    search_hint = "run code in a sandbox"
    input_model = RunCodeInput
    side_effect = "mutating"

    def title_for(self, args: RunCodeInput) -> str:
        suffix = " with network access" if args.network else ""
        return f"Run {args.language} snippet{suffix}"

    async def run(self, args: RunCodeInput, ctx: ToolContext) -> ToolOutput | str:
        iso = isolation()
        snapshot = await asyncio.to_thread(take_snapshot, ctx.workspace) if iso.isolated else None
        launch = prepare(args, ctx.workspace, iso, snapshot)
        try:
            return await _run(args, ctx, launch)
        finally:
            launch.close_fds()
            launch.owner.kill()  # the sandbox leaves nothing running behind
            if launch.snapshot is not None and not launch.cleaned:
                remove_left_behind(launch.snapshot)


async def _run(args: RunCodeInput, ctx: ToolContext, launch: Launch) -> ToolOutput | str:
    run = _Run(args, launch.applied, OutputBuffer(), OutputBuffer(), time.perf_counter())

    def on_stdout(text: str) -> None:
        run.stdout.append(text)
        ctx.progress(output=text)

    def on_stderr(text: str) -> None:
        run.stderr.append(text)
        ctx.progress(output=text)

    try:
        proc = GroupProcess.start(
            launch.argv,
            ctx.workspace,
            on_stdout,
            on_stderr=on_stderr,
            env=launch.env,
            pass_fds=launch.pass_fds,
            owner=launch.owner,
        )
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the code, an argument or env
        raise ToolExecutionError(f"Could not start the sandboxed program: {exc}") from None
    code = await _wait(proc, run, str(ctx.workspace))
    proc.kill()
    if launch.snapshot is not None:
        launch.cleaned = True
        if removed := await asyncio.to_thread(remove_left_behind, launch.snapshot):
            run.applied += f"\nRemoved what the program left at protected paths: {', '.join(removed)}"
    run.ended(describe_exit(code))
    if code != 0:
        raise ToolExecutionError(
            f"The program failed with {run.status}.", output=run.report(str(ctx.workspace))
        )
    return run.report(str(ctx.workspace))


async def _wait(proc: GroupProcess, run: _Run, workspace: str) -> int:
    """Exit code; on timeout or interrupt every process of the run is killed first."""
    try:
        return await asyncio.wait_for(proc.wait(DRAIN_GRACE_S), run.args.timeout)
    except asyncio.TimeoutError:
        await proc.terminate()
        run.ended(f"timed out after {run.args.timeout} s (killed)")
        message = (
            f"The program timed out after {run.args.timeout} s and was killed with every process it started."
        )
        raise ToolTimeoutError(message, output=run.report(workspace)) from None
    except asyncio.CancelledError:
        proc.kill()
        raise
