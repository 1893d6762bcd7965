"""What RunCode's sandbox keeps a program from leaving behind in the workspace: goat's and Claude
Code's configuration and files that run code later (config/code_files.py), at any depth.

bubblewrap binds paths, not patterns, so: one walk of the workspace before the run finds those that
exist; they are bound read-only (a mount point cannot be changed, renamed or removed, and a hard
link to it crosses mounts). A second walk after the run (every process of it has ended) finds those
that are new (an identity not seen before, so a `.git` renamed away and made again counts) and
removes them. Walks list names only (no stat per file) and do not enter what they flag or follow
symlinks. Credential stores inside the workspace (home as workspace) are hidden: an empty folder or
an empty file in their place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from goat_jupyter.config.code_files import entry_reason, name_key
from goat_jupyter.config.secret_stores import stores

CONFIG_NAMES = frozenset({".goat", ".claude", ".mcp.json"})
Identity = tuple[int, int]


@dataclass(frozen=True)
class Found:
    path: Path
    identity: Identity
    is_dir: bool
    is_link: bool


@dataclass
class Snapshot:
    """The protected entries of a workspace before a run."""

    workspace: Path
    entries: list[Found] = field(default_factory=lambda: list[Found]())

    @property
    def identities(self) -> set[Identity]:
        return {found.identity for found in self.entries}


def take_snapshot(workspace: Path) -> Snapshot:
    real = Path(os.path.realpath(workspace))
    with contextlib.suppress(OSError):
        (real / ".goat").mkdir(exist_ok=True)  # goat's own folder exists, so it is bound read-only
    return Snapshot(real, list(protected_entries(real)))


def protected_entries(root: Path) -> Iterator[Found]:
    """Every protected entry below `root`, not entering what it yields nor following symlinks."""
    pending: list[tuple[str, list[str]]] = [(str(root), [])]
    while pending:
        folder, keys = pending.pop()
        for entry in _listing(folder):
            entry_keys = [*keys, name_key(entry.name)]
            if entry_keys[-1] in CONFIG_NAMES or entry_reason(entry_keys) is not None:
                yield _found(entry)
            elif entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, entry_keys))


def _listing(folder: str) -> list[os.DirEntry[str]]:
    """A folder's entries; one the program made unreadable is opened up again first."""
    for attempt in range(2):
        try:
            with os.scandir(folder) as entries:
                return list(entries)
        except PermissionError:
            if attempt == 0:
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)
        except OSError:
            break
    return []


def _found(entry: os.DirEntry[str]) -> Found:
    info = entry.stat(follow_symlinks=False)
    is_link = stat.S_ISLNK(info.st_mode)
    return Found(Path(entry.path), (info.st_dev, info.st_ino), stat.S_ISDIR(info.st_mode), is_link)


def bind_args(snapshot: Snapshot) -> list[str]:
    """bwrap arguments: existing protected entries read-only, credential stores hidden."""
    args: list[str] = []
    for found in snapshot.entries:
        target = Path(os.path.realpath(found.path)) if found.is_link else found.path
        if _inside(target, snapshot.workspace) and os.path.exists(target):
            args += ["--ro-bind", str(target), str(target)]
    return args + hide_stores(snapshot.workspace)


def hide_stores(workspace: Path) -> list[str]:
    args: list[str] = []
    for store, _ in stores():
        real = Path(os.path.realpath(store))
        if not _inside(real, workspace) or real == workspace:
            continue
        if real.is_dir():
            args += ["--tmpfs", str(real), "--remount-ro", str(real)]
        elif real.exists():
            args += ["--ro-bind", "/dev/null", str(real)]
    return args


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def remove_left_behind(snapshot: Snapshot) -> list[str]:
    """Protected entries the run created (not seen before): removed; their paths, for the result."""
    before = snapshot.identities
    removed: list[str] = []
    for found in protected_entries(snapshot.workspace):
        if found.identity in before:
            continue  # there before (perhaps under a renamed folder): the program could not change it
        _remove(found)
        removed.append(str(found.path))
    return removed


def _remove(found: Found) -> None:
    for attempt in range(2):
        try:
            if found.is_dir and not found.is_link:
                shutil.rmtree(found.path)
            else:
                found.path.unlink()
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt == 0:  # the program locked the folder (or what is inside): open it up
                with contextlib.suppress(OSError):
                    os.chmod(found.path.parent, 0o700)
                if found.is_dir and not found.is_link:
                    _open_up(found.path)


def _open_up(root: Path) -> None:
    """Make every folder below `root` listable and writable (the program may have locked them)."""
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        pending += [e.path for e in _listing(folder) if e.is_dir(follow_symlinks=False)]
