"""RunCode: run a Python or bash snippet in a sandboxed subprocess (not in the kernel)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from goat_jupyter.errors import ToolExecutionError, ToolTimeoutError
from goat_jupyter.process import GroupProcess, OutputBuffer, describe_exit
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.bash import DRAIN_GRACE_S, OUTPUT_LIMIT, bounded_output

MEMORY_LIMIT_BYTES = 2 << 30
CPU_GRACE_S = 1  # the CPU-time limit is the wall-clock timeout plus this


class RunCodeInput(ToolInput):
    language: Literal["python", "bash"] = Field(description="Language of the code.")
    code: str = Field(description="The program text.")
    args: list[str] | None = Field(default=None, description="Command-line arguments for the program.")
    env: dict[str, str] | None = Field(default=None, description="Extra environment variables.")
    timeout: int = Field(default=60, ge=1, le=600, description="Wall-clock limit in seconds.")


@dataclass(frozen=True)
class NetworkIsolation:
    """How to start a process without network access here, found once per process."""

    prefix: tuple[str, ...]
    note: str

    @property
    def isolated(self) -> bool:
        return bool(self.prefix)


class _IsolationCache:
    value: NetworkIsolation | None = None


async def network_isolation() -> NetworkIsolation:
    """A new network namespace via `unshare` when this machine allows one (detected once)."""
    if _IsolationCache.value is None:
        _IsolationCache.value = await _detect_isolation()
    return _IsolationCache.value


async def _detect_isolation() -> NetworkIsolation:
    unshare = shutil.which("unshare")
    if not sys.platform.startswith("linux") or unshare is None:
        return NetworkIsolation((), "NOT isolated: the `unshare` command is not available on this system.")
    flags = ["-n", "-rn"] if os.geteuid() == 0 else ["-rn"]
    for flag in flags:
        if await _succeeds([unshare, flag, "--", "true"]):
            return NetworkIsolation(
                (unshare, flag, "--"), f"isolated (new network namespace, unshare {flag})."
            )
    return NetworkIsolation(
        (), "NOT isolated: `unshare` could not create a network namespace here (no permission)."
    )


async def _succeeds(argv: list[str]) -> bool:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        return await asyncio.wait_for(proc.wait(), 10) == 0
    except (OSError, asyncio.TimeoutError):
        return False


def sandbox_argv(args: RunCodeInput, isolation: NetworkIsolation) -> list[str]:
    """The program under `ulimit` (CPU time, address space), inside the network namespace if any."""
    if args.language == "python":
        program = [sys.executable, "-c", args.code]
    else:
        program = ["bash", "-c", args.code, "bash"]
    limits = f'ulimit -t {args.timeout + CPU_GRACE_S} -v {MEMORY_LIMIT_BYTES // 1024} && exec "$@"'
    return [*isolation.prefix, "bash", "-c", limits, "goat-sandbox", *program, *(args.args or [])]


@dataclass
class _Run:
    """What the program printed and how it ended, for the result layout."""

    args: RunCodeInput
    isolation: NetworkIsolation
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
                f"Sandbox: working directory {workspace}; CPU time limit {self.args.timeout + CPU_GRACE_S} s; "
                f"memory limit {MEMORY_LIMIT_BYTES >> 30} GiB",
                f"Network: {self.isolation.note}",
            ]
        )
        budget = OUTPUT_LIMIT - len(header) - 200
        out, err = self.stdout.total_chars, self.stderr.total_chars
        err_room = min(err, max(budget // 3, budget - out))
        stdout = bounded_output(self.stdout, budget - err_room) if out else "(empty)"
        stderr = bounded_output(self.stderr, max(err_room, 1)) if err else "(empty)"
        return f"{header}\n\n--- stdout ---\n{stdout.rstrip()}\n\n--- stderr ---\n{stderr.rstrip()}"


class RunCodeTool(Tool[RunCodeInput]):
    name = "RunCode"
    input_model = RunCodeInput
    side_effect = "mutating"
    max_output_chars = OUTPUT_LIMIT

    def title_for(self, args: RunCodeInput) -> str:
        return f"Run {args.language} snippet"

    async def run(self, args: RunCodeInput, ctx: ToolContext) -> ToolOutput | str:
        run = _Run(args, await network_isolation(), OutputBuffer(), OutputBuffer(), time.perf_counter())

        def on_stdout(text: str) -> None:
            run.stdout.append(text)
            ctx.progress(output=text)

        def on_stderr(text: str) -> None:
            run.stderr.append(text)
            ctx.progress(output=text)

        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(args.env or {})}
        argv = sandbox_argv(args, run.isolation)
        try:
            proc = GroupProcess.start(argv, ctx.workspace, on_stdout, on_stderr=on_stderr, env=env)
        except OSError as exc:
            raise ToolExecutionError(f"Could not start the sandboxed program: {exc}") from None
        code = await _wait(proc, run, str(ctx.workspace))
        proc.kill()  # the sandbox leaves nothing running behind
        run.ended(describe_exit(code))
        if code != 0:
            raise ToolExecutionError(
                f"The program failed with {run.status}.", output=run.report(str(ctx.workspace))
            )
        return run.report(str(ctx.workspace))


async def _wait(proc: GroupProcess, run: _Run, workspace: str) -> int:
    """Exit code; on timeout or interrupt the whole process group is killed first."""
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
