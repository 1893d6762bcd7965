"""What RunCode's sandbox keeps a program from leaving behind in the workspace: goat's and Claude
Code's configuration and files that run code later (config/code_files.py), at any depth.

bubblewrap binds paths, not patterns, so: a walk of the workspace before the run finds those that
exist; they are bound read-only (a mount point cannot be changed, renamed or removed, and a hard
link to it crosses mounts). A walk after the run (every process of it has ended) finds those that
are new (an identity not seen before, so a `.git` renamed away and made again counts) and removes
them. Walks do not enter what they flag or follow symlinks, and list only folders that changed
since the last walk (WorkspaceIndex). Credential stores inside the workspace (home as workspace) are hidden: an empty folder or
an empty file in their place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from goat_jupyter.config.code_files import entry_reason, name_key
from goat_jupyter.config.secret_stores import stores

CONFIG_NAMES = frozenset({".goat", ".claude", ".mcp.json"})
Identity = tuple[int, int]
# A folder changed less than this before it was listed is listed again next time: a change within
# the same tick of the file system's clock would leave its times as they were.
GRACE_NS = 1_000_000_000
_INDEXES_KEPT = 8


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


@dataclass(frozen=True)
class _Folder:
    """One folder as last listed: its identity and times, its subfolders and protected entries."""

    stamp: tuple[int, int, int, int]  # device, inode, ctime, mtime
    listed_at: int
    subfolders: tuple[str, ...]
    flagged: tuple[Found, ...]

    def still(self, info: os.stat_result) -> bool:
        return _stamp(info) == self.stamp and self.stamp[2] < self.listed_at - GRACE_NS


class WorkspaceIndex:
    """The workspace's protected entries, kept up to date by listing only the folders whose times
    changed (creating, removing or renaming an entry changes its folder's ctime, which no program
    can set back): a walk is one stat per folder, not one entry per file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[str, _Folder] = {}
        self._lock = threading.Lock()

    def refresh(self) -> list[Found]:
        with self._lock:
            seen: dict[str, _Folder] = {}
            pending = [str(self.root)]
            while pending:
                folder = pending.pop()
                state = self._state(folder)
                if state is not None:
                    seen[folder] = state
                    pending += [f"{folder}/{name}" for name in state.subfolders]
            self._folders = seen
            return [found for state in seen.values() for found in state.flagged]

    def _state(self, folder: str) -> _Folder | None:
        try:
            info = os.stat(folder, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        old = self._folders.get(folder)
        if old is not None and old.still(info):
            return old
        keys = [name_key(part) for part in Path(folder).relative_to(self.root).parts]
        return _list(folder, keys, info)


def _list(folder: str, keys: list[str], info: os.stat_result) -> _Folder:
    listed_at = time.time_ns()
    subfolders: list[str] = []
    flagged: list[Found] = []
    for entry in _listing(folder):
        entry_keys = [*keys, name_key(entry.name)]
        if entry_keys[-1] in CONFIG_NAMES or entry_reason(entry_keys) is not None:
            flagged.append(_found(entry))
        elif entry.is_dir(follow_symlinks=False):
            subfolders.append(entry.name)
    return _Folder(_stamp(info), listed_at, tuple(subfolders), tuple(flagged))


def _stamp(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_ctime_ns, info.st_mtime_ns)


_indexes: dict[Path, WorkspaceIndex] = {}
_indexes_lock = threading.Lock()


def index_of(workspace: Path) -> WorkspaceIndex:
    """The index of this workspace, kept between runs (a few workspaces at most)."""
    with _indexes_lock:
        index = _indexes.get(workspace)
        if index is None:
            if len(_indexes) >= _INDEXES_KEPT:
                _indexes.pop(next(iter(_indexes)))
            index = _indexes[workspace] = WorkspaceIndex(workspace)
        return index


def take_snapshot(workspace: Path) -> Snapshot:
    real = Path(os.path.realpath(workspace))
    with contextlib.suppress(OSError):
        (real / ".goat").mkdir(exist_ok=True)  # goat's own folder exists, so it is bound read-only
    return Snapshot(real, index_of(real).refresh())


def protected_entries(root: Path) -> list[Found]:
    """Every protected entry below `root` (a fresh walk, nothing remembered)."""
    return WorkspaceIndex(root).refresh()


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
    for found in index_of(snapshot.workspace).refresh():
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
