"""Shell processes in their own process group, so a timeout or interrupt kills every child."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path

READ_CHUNK = 65536


async def spawn_shell(
    command: str, cwd: Path, env: Mapping[str, str] | None = None
) -> asyncio.subprocess.Process:
    """`bash -c command`, stdin /dev/null, stderr merged into stdout, new session (= group)."""
    return await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        cwd=str(cwd),
        env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )


def kill_group(proc: asyncio.subprocess.Process, sig: int = signal.SIGKILL) -> None:
    """Signal the whole process group; quiet if it is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def terminate_group(proc: asyncio.subprocess.Process, grace_s: float = 0.2) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after a short grace period."""
    kill_group(proc, signal.SIGTERM)
    with contextlib.suppress(asyncio.TimeoutError, ProcessLookupError):
        await asyncio.wait_for(proc.wait(), grace_s)
    kill_group(proc, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()


async def pump_output(proc: asyncio.subprocess.Process, on_chunk: Callable[[str], None]) -> None:
    """Read stdout to EOF, decoding incrementally so multi-byte characters are never split."""
    import codecs

    assert proc.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await proc.stdout.read(READ_CHUNK):
        text = decoder.decode(chunk)
        if text:
            on_chunk(text)
    tail = decoder.decode(b"", final=True)
    if tail:
        on_chunk(tail)
