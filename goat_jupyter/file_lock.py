"""Per-file locks around read-check-write: one lock per path for every session in the kernel, plus an
advisory `flock` so other goat processes (a second kernel) wait too."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from goat_jupyter.errors import ConflictError

LOCK_TIMEOUT_S = 30.0
BUSY = -1  # _try_flock: another holder has it
POLL_S = 0.005

_registry_guard = threading.Lock()
_thread_locks: dict[str, threading.Lock] = {}


@dataclass
class _Held:
    key: str
    lock: threading.Lock
    fd: int | None  # the flock'ed descriptor; None where the filesystem has no flock


def lock_key(path: Path) -> str:
    """Symlinks and `..` resolved, so two spellings of one file share a lock."""
    return os.path.realpath(path)


def _thread_lock(key: str) -> threading.Lock:
    with _registry_guard:
        return _thread_locks.setdefault(key, threading.Lock())


def _flock_target(key: str) -> str:
    """The file itself, or for a path that does not exist yet its nearest existing folder."""
    target = key
    while not os.path.exists(target):
        parent = os.path.dirname(target)
        if parent == target:
            break
        target = parent
    return target


if sys.platform == "win32":  # pragma: no cover - no flock: in-kernel locks and compare-before-rename only

    def _try_flock(key: str) -> int | None:
        return None

else:
    import fcntl

    def _try_flock(key: str) -> int | None:
        """A locked descriptor, None when flock is not possible here, BUSY when someone else holds it."""
        target = _flock_target(key)
        if not _lockable(target):
            return None  # a FIFO or device: opening it could block or have side effects
        try:
            fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None  # unreadable or vanished: the in-kernel lock and the rename check still apply
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return BUSY
        except OSError:
            os.close(fd)
            return None
        if not _still_there(fd, target) or _flock_target(key) != target:
            os.close(fd)  # replaced by an atomic rename (or created) while we locked: lock what is there now
            return BUSY
        return fd


def _lockable(target: str) -> bool:
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _still_there(fd: int, target: str) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(target).st_ino
    except OSError:
        return False


def _try_one(key: str) -> _Held | None:
    lock = _thread_lock(key)
    if not lock.acquire(blocking=False):
        return None
    try:
        fd = _try_flock(key)
    except BaseException:
        lock.release()
        raise
    if fd == BUSY:
        lock.release()
        return None
    return _Held(key, lock, fd)


def _release(held: list[_Held]) -> None:
    for item in reversed(held):
        if item.fd is not None:
            os.close(item.fd)  # closing the descriptor drops the flock
        item.lock.release()


def _try_all(keys: list[str]) -> list[_Held] | None:
    """Every lock or none: taking them all-or-nothing can never deadlock."""
    held: list[_Held] = []
    for key in keys:
        item = _try_one(key)
        if item is None:
            _release(held)
            return None
        held.append(item)
    return held


def _timeout_error(paths: tuple[Path, ...], timeout: float) -> ConflictError:
    names = ", ".join(str(p) for p in paths)
    return ConflictError(
        f"{names} is being changed by another session or process (still locked after {timeout:.0f} s). "
        "Try again in a moment."
    )


def _keys(paths: tuple[Path, ...]) -> list[str]:
    return sorted({lock_key(p) for p in paths})


def _poll(paths: tuple[Path, ...], timeout: float, wait: Callable[[float], None]) -> list[_Held]:
    keys = _keys(paths)
    deadline = time.monotonic() + timeout
    while (held := _try_all(keys)) is None:
        if time.monotonic() > deadline:
            raise _timeout_error(paths, timeout)
        wait(POLL_S)
    return held


@contextlib.contextmanager
def locked(*paths: Path, timeout: float = LOCK_TIMEOUT_S) -> Generator[None]:
    """Hold the locks of `paths` (for worker threads: waits by sleeping)."""
    held = _poll(paths, timeout, time.sleep)
    try:
        yield
    finally:
        _release(held)


@contextlib.asynccontextmanager
async def locked_async(*paths: Path, timeout: float = LOCK_TIMEOUT_S) -> AsyncGenerator[None]:
    """Hold the locks of `paths` from a coroutine: waits without blocking the event loop."""
    keys = _keys(paths)
    deadline = time.monotonic() + timeout
    while (held := _try_all(keys)) is None:
        if time.monotonic() > deadline:
            raise _timeout_error(paths, timeout)
        await asyncio.sleep(POLL_S)
    try:
        yield
    finally:
        _release(held)
