"""Before-images of files and folders for checkpoints: capture, fingerprint, restore."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from goat_jupyter.fileio import atomic_write_bytes

MAX_SNAPSHOT_BYTES = 64 << 20  # per run; larger before-images are recorded as not restorable
StateKind = Literal["absent", "file", "dir", "link", "too_large"]


@dataclass
class Budget:
    """How many bytes of before-images a run may still keep."""

    left: int = MAX_SNAPSHOT_BYTES


@dataclass
class PathState:
    """What was at a path: nothing, a file's bytes and mode, a symlink, or a folder tree."""

    kind: StateKind
    data: bytes = b""
    mode: int | None = None
    link: str = ""
    children: dict[str, PathState] = field(default_factory=lambda: dict[str, "PathState"]())

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256(self.kind.encode())
        if self.kind == "file":
            digest.update(self.data)
        elif self.kind == "link":
            digest.update(self.link.encode())
        for name in sorted(self.children):
            digest.update(f"\0{name}\0{self.children[name].fingerprint}".encode())
        return digest.hexdigest()


def capture(path: Path, budget: Budget) -> PathState:
    """The state of `path` now; `too_large` once the run's snapshot budget is spent."""
    if os.path.islink(path):
        return PathState("link", link=os.readlink(path))
    if path.is_dir():
        children = {child.name: capture(child, budget) for child in sorted(path.iterdir())}
        if any(state.kind == "too_large" for state in children.values()):
            return PathState("too_large")
        return PathState("dir", mode=path.stat().st_mode & 0o7777, children=children)
    if not path.exists():
        return PathState("absent")
    size = path.stat().st_size
    if size > budget.left:
        return PathState("too_large")
    budget.left -= size
    return PathState("file", data=path.read_bytes(), mode=path.stat().st_mode & 0o7777)


def fingerprint(path: Path) -> str:
    """The fingerprint `capture` would give, without a budget (used to detect later changes)."""
    return capture(path, Budget(left=1 << 62)).fingerprint


def restore(path: Path, state: PathState) -> None:
    """Put `state` back at `path`, replacing whatever is there now."""
    if state.kind == "file" and (path.is_file() or not os.path.lexists(path)) and not os.path.islink(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(path, state.data, state.mode)
        return
    remove(path)
    if state.kind == "absent":
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if state.kind == "link":
        os.symlink(state.link, path)
    elif state.kind == "dir":
        path.mkdir()
        for name, child in state.children.items():
            restore(path / name, child)
        if state.mode is not None:
            os.chmod(path, state.mode)
    elif state.kind == "file":
        _write_bytes(path, state.data, state.mode)


def remove(path: Path) -> None:
    if os.path.islink(path) or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _write_bytes(path: Path, data: bytes, mode: int | None) -> None:
    """Atomically, byte for byte, with the mode the file had when it was snapshotted."""
    atomic_write_bytes(path, data)
    if mode is not None:
        os.chmod(path, mode)
