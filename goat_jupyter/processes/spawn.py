"""Child processes in their own process group and owner (cgroup or marker), so a timeout, interrupt or
the kernel's death kills every descendant, `setsid` ones included."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shlex
import signal
import subprocess
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from goat_jupyter.processes.owner import Owner
from goat_jupyter.processes.reaper import ensure_reaper

TextSink = Callable[[str], None]
KEEP_CHARS = 8_000_000  # of each end: 16 M characters (a runaway `yes`) are kept, the rest counted
READ_CHUNK = 65536
TERMINATE_GRACE_S = 0.2
KILL_REAP_S = 0.1
G = TypeVar("G", bound="GroupProcess")


class HasPid(Protocol):
    @property
    def pid(self) -> int: ...


def _discard(text: str) -> None:
    return None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _close_quietly(*fds: int) -> None:
    for fd in set(fds) - {-1}:
        with contextlib.suppress(OSError):
            os.close(fd)


class OutputBuffer:
    """The first and last `keep` characters of a stream; the middle is counted, not kept. The default
    keeps any output a tool stores whole (tools/runner.py spills it) short of a runaway stream."""

    def __init__(self, keep: int = KEEP_CHARS) -> None:
        self.keep = keep
        self._head: list[str] = []  # chunks, joined once: appending to one string copies it each time
        self._head_chars = 0
        self._tail: deque[str] = deque()
        self._tail_chars = 0
        self.total_chars = 0
        self.total_newlines = 0
        self.dropped_chars = 0

    def append(self, text: str) -> None:
        self.total_chars += len(text)
        self.total_newlines += text.count("\n")
        room = self.keep - self._head_chars
        if room > 0:
            self._head.append(text[:room])
            self._head_chars += len(self._head[-1])
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_chars += len(text)
        while self._tail_chars - len(self._tail[0]) >= self.keep:
            dropped = self._tail.popleft()
            self._tail_chars -= len(dropped)
            self.dropped_chars += len(dropped)

    @property
    def head(self) -> str:
        return "".join(self._head)

    @property
    def tail(self) -> str:
        return "".join(self._tail)

    def text(self) -> str:
        """Everything kept: the whole stream unless `dropped_chars` is non-zero."""
        return self.head + self.tail

    def described(self) -> str:
        """`text()`, saying where and how much of the middle was not kept."""
        if not self.dropped_chars:
            return self.text()
        head, tail = self.head, self.tail
        lines = self.total_newlines - head.count("\n") - tail.count("\n")
        return f"{head}\n\n... [{self.dropped_chars:,} characters ({lines:,} lines) not kept] ...\n\n{tail}"


def _popen(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None, out: int, err: int, pass_fds: Sequence[int]
) -> subprocess.Popen[bytes]:
    """Fork and exec at once, as asyncio does, minus its per-child watcher thread (~0.5 ms)."""
    return subprocess.Popen(
        list(argv),
        cwd=str(cwd),
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )


class _PipeReader:
    """Reads a pipe from the event loop (no thread), decoding UTF-8 without splitting characters."""

    def __init__(self, fd: int, on_text: TextSink, loop: asyncio.AbstractEventLoop) -> None:
        self.fd = fd
        self.on_text = on_text
        self.closed: asyncio.Future[None] = loop.create_future()
        self._loop = loop
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        os.set_blocking(fd, False)
        loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._deliver(self._decoder.decode(data))
        else:
            self.close()

    def _deliver(self, text: str) -> None:
        if text:
            self.on_text(text)

    def close(self) -> None:
        """Stop reading (at end of file, or when the caller gives up on the rest)."""
        if self.closed.done():
            return
        self._loop.remove_reader(self.fd)
        os.close(self.fd)
        self._deliver(self._decoder.decode(b"", final=True))
        self.closed.set_result(None)


class GroupProcess:
    """A child in a new session (its own process group) whose output pipes we read ourselves."""

    def __init__(self, process: subprocess.Popen[bytes], owner: Owner) -> None:
        self.process = process
        self.owner = owner
        self._readers: list[_PipeReader] = []

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @classmethod
    def start(
        cls: type[G],
        argv: Sequence[str],
        cwd: Path,
        on_stdout: TextSink,
        *,
        on_stderr: TextSink | None = None,
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        owner: Owner | None = None,
        joins_owner: bool = False,
    ) -> G:
        """Start `argv` with stdin /dev/null in a new session; stderr goes to stdout unless `on_stderr`.

        `joins_owner`: argv already enters the owner's cgroup itself (see `Owner.join_script`).

        Synchronous on purpose: nothing can interrupt it between the fork and the readers being set up.
        """
        loop = asyncio.get_running_loop()
        ensure_reaper()
        owner = owner or Owner.new()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if on_stderr is not None else (-1, out_w)
        try:
            argv = list(argv) if joins_owner else owner.wrap(list(argv))
            process = _popen(argv, cwd, owner.env(env), out_w, err_w, pass_fds)
        except BaseException:
            _close_quietly(out_r, err_r)
            owner.release()
            raise
        finally:
            _close_quietly(out_w, err_w)
        group = cls(process, owner)
        group._readers.append(_PipeReader(out_r, on_stdout, loop))
        if on_stderr is not None:
            group._readers.append(_PipeReader(err_r, on_stderr, loop))
        return group

    @property
    def output_closed(self) -> bool:
        """True once every output pipe reached end of file (no process holds it any more)."""
        return all(reader.closed.done() for reader in self._readers)

    async def wait(self, drain_grace_s: float | None = None) -> int:
        """Exit code of the child, after its output ends or `drain_grace_s` more seconds passed."""
        code = await self.wait_exit()
        pending = [reader.closed for reader in self._readers if not reader.closed.done()]
        if pending:
            await asyncio.wait(pending, timeout=drain_grace_s)  # never cancels the futures
        return code

    async def wait_exit(self) -> int:
        """Wait for the child to exit and reap it, without a thread where Linux pidfds exist."""
        if self.process.poll() is not None:
            return self.process.returncode
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3
            return await loop.run_in_executor(None, self.process.wait)
        exited: asyncio.Future[None] = loop.create_future()
        loop.add_reader(pidfd, _resolve, exited)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return self.process.wait()  # already exited: this only reaps it

    def _live_pid(self) -> int | None:
        """Our child's pid while it is not reaped yet (after that the number may belong to another)."""
        return self.pid if self.process.returncode is None else None

    def group_alive(self) -> bool:
        """Whether any process it started (a background grandchild, say) is still running."""
        try:
            os.killpg(self.pid, 0)
        except (ProcessLookupError, PermissionError):
            return bool(self.owner.pids(self._live_pid()) - {self.pid})
        return True

    def detach_output(self) -> None:
        """Keep reading (and dropping) output that leftover processes write, so they get no SIGPIPE."""
        for reader in self._readers:
            reader.on_text = _discard

    def close(self) -> None:
        for reader in self._readers:
            reader.close()
        self.owner.release()

    def kill(self) -> None:
        """SIGKILL the group and every process it started, stop reading; safe in a cancellation handler."""
        kill_group(self.process)
        self.owner.kill(self._live_pid())
        self.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(KILL_REAP_S)  # SIGKILL is quick; if not, Popen reaps it later

    async def terminate(self, grace_s: float = TERMINATE_GRACE_S) -> None:
        """SIGTERM the group, then SIGKILL whatever it started that is left after a short grace period."""
        kill_group(self.process, signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.wait_exit(), grace_s)
        kill_group(self.process, signal.SIGKILL)
        self.owner.kill(self._live_pid())
        await self.wait_exit()
        self.close()


class ShellProcess(GroupProcess):
    """`bash -c command` with merged output; optionally reports the directory the shell ended in."""

    cwd_fd: int | None = None  # read end of the pipe the shell writes its final directory to

    def final_cwd(self) -> Path | None:
        """The physical directory the shell was in when it exited, if it told us (read once)."""
        if self.cwd_fd is None:
            return None
        try:
            data = os.read(self.cwd_fd, 65536)
        except OSError:
            data = b""
        os.close(self.cwd_fd)
        self.cwd_fd = None
        lines = data.decode("utf-8", errors="surrogateescape").splitlines()
        return Path(lines[-1]) if lines and lines[-1].startswith("/") else None

    def close(self) -> None:
        super().close()
        if self.cwd_fd is not None:
            os.close(self.cwd_fd)
            self.cwd_fd = None


def spawn_shell(
    command: str,
    cwd: Path,
    on_output: TextSink,
    *,
    env: Mapping[str, str] | None = None,
    report_cwd: bool = False,
) -> ShellProcess:
    """`bash -c command` in its own group; with `report_cwd` the final directory goes to an extra fd."""
    if not report_cwd:
        return ShellProcess.start(["bash", "-c", command], cwd, on_output, env=env)
    cwd_r, cwd_w = os.pipe()
    os.set_blocking(cwd_r, False)
    # eval confines a syntax error to the command itself; the EXIT trap also runs after `exit`.
    # The script joins its cgroup itself: one exec fewer than Owner.wrap's `sh` (~1 ms a call).
    owner = Owner.new()
    script = f"{owner.join_script()}trap 'pwd -P >&{cwd_w} 2>/dev/null' EXIT; eval {shlex.quote(command)}"
    try:
        argv = ["bash", "-c", script]
        shell = ShellProcess.start(
            argv, cwd, on_output, env=env, pass_fds=[cwd_w], owner=owner, joins_owner=True
        )
    except BaseException:
        os.close(cwd_r)
        raise
    finally:
        os.close(cwd_w)
    shell.cwd_fd = cwd_r
    return shell


def kill_group(proc: HasPid, sig: int = signal.SIGKILL) -> None:
    """Signal the whole process group (led by `proc`); quiet if it is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def describe_exit(code: int) -> str:
    """`exit code 2`, or the signal name for a process killed by a signal (negative code)."""
    if code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"killed by {name} (exit code {code})"
