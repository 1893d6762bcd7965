"""The part of a session that tools read and change: paths, file-read records, todos, tasks."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from goat_jupyter.errors import ConflictError
from goat_jupyter.processes.tasks import TaskManager
from goat_jupyter.settings import Settings

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str
    status: TodoStatus
    activeForm: str  # noqa: N815 - the seed's field name


LineRange = tuple[int, int]  # first and last line, 1-based, inclusive


@dataclass(frozen=True)
class FileStamp:
    """What the session knew about a file when it last read or wrote it."""

    mtime_ns: int
    size: int
    sha256: str | None  # None when only part of a large file was read
    seen: tuple[LineRange, ...] | None = None  # lines shown by partial Reads; None: the whole file
    total_lines: int = 0

    def same_content(self, other: FileStamp) -> bool:
        if self.sha256 is not None or other.sha256 is not None:
            return self.sha256 == other.sha256
        return (self.mtime_ns, self.size) == (other.mtime_ns, other.size)

    def unseen(self) -> list[LineRange]:
        """The line ranges no Read of this content has shown (empty when the whole file was seen)."""
        if self.seen is None:
            return []
        gaps: list[LineRange] = []
        next_line = 1
        for first, last in sorted(self.seen):
            if first > next_line:
                gaps.append((next_line, first - 1))
            next_line = max(next_line, last + 1)
        if next_line <= self.total_lines:
            gaps.append((next_line, self.total_lines))
        return gaps


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        data = handle.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def describe_ranges(ranges: list[LineRange]) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


class FileReadState:
    """Read-before-write bookkeeping (TOOLS.md common rules), shared by a session and its subagents."""

    def __init__(self) -> None:
        self._stamps: dict[str, FileStamp] = {}

    def record(
        self, path: Path, *, content_hash: bool = True, lines: tuple[int, int, int] | None = None
    ) -> None:
        """Remember `path` as read or written; `lines` = (first, last, total) for a partial text Read."""
        stat = path.stat()
        digest = file_digest(path) if content_hash else None
        stamp = FileStamp(stat.st_mtime_ns, stat.st_size, digest)
        if lines is not None:
            stamp = self._partial(path, stamp, lines)
        self._stamps[str(path)] = stamp

    def _partial(self, path: Path, stamp: FileStamp, lines: tuple[int, int, int]) -> FileStamp:
        first, last, total = lines
        if first <= 1 and last >= total:
            return stamp
        seen: tuple[LineRange, ...] = ((first, last),) if last >= first else ()
        previous = self._stamps.get(str(path))
        if previous is not None and previous.same_content(stamp):
            if previous.seen is None:
                return previous
            seen = previous.seen + seen  # several partial Reads of the same content add up
        merged = FileStamp(stamp.mtime_ns, stamp.size, stamp.sha256, seen, total)
        return merged if merged.unseen() else FileStamp(stamp.mtime_ns, stamp.size, stamp.sha256)

    def record_edit(
        self, path: Path, moved: Callable[[LineRange], LineRange], written: list[LineRange]
    ) -> None:
        """After an Edit: a file seen only in part stays so (the lines shown, `moved` to where they are
        now, plus the lines the Edit wrote), so an Edit cannot unlock a whole-file Write."""
        previous = self._stamps.get(str(path))
        self.record(path)
        if previous is None or previous.seen is None:
            return
        current = self._stamps[str(path)]
        total = _line_count(path)
        seen = tuple(moved(r) for r in previous.seen) + tuple(written)
        partial = FileStamp(current.mtime_ns, current.size, current.sha256, seen, total)
        if partial.unseen():
            self._stamps[str(path)] = partial

    def unseen_between(self, path: Path, first: int, last: int) -> list[LineRange]:
        """The lines from `first` to `last` that no Read of the current content has shown."""
        stamp = self._stamps.get(str(path))
        if stamp is None:
            return [(first, last)]
        return [(max(a, first), min(b, last)) for a, b in stamp.unseen() if a <= last and b >= first]

    def forget(self, path: Path) -> None:
        self._stamps.pop(str(path), None)

    def was_read(self, path: Path) -> bool:
        return str(path) in self._stamps

    def check_writable(self, path: Path, *, whole: bool = False) -> os.stat_result | None:
        """Raise ConflictError unless an existing file was read (all of it when `whole`) and is unchanged
        since; returns the file's stat as checked (None: the file does not exist)."""
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        self.check_content(path, stat, lambda: file_digest(path), whole=whole)
        return stat

    def check_content(
        self, path: Path, stat: os.stat_result, digest: Callable[[], str], *, whole: bool = False
    ) -> None:
        """The check of `check_writable` for a file whose stat the caller took (and whose hash
        `digest` computes, only when needed)."""
        stamp = self._stamps.get(str(path))
        if stamp is None:
            raise ConflictError(
                f"{path} exists but has not been read in this session. Read it first, then retry the change."
            )
        if not _unchanged(stamp, stat, digest):
            raise ConflictError(
                f"{path} was modified since it was last read (by the user or another process). "
                "Read it again before changing it."
            )
        if whole and (gaps := stamp.unseen()):
            raise ConflictError(
                f"{path} was only partly read: lines {describe_ranges(gaps)} of {stamp.total_lines} were not "
                "shown in this session, and overwriting the whole file would replace them unseen. Read those "
                "lines first (or the whole file), or use Edit to change only the part you read."
            )


def _unchanged(stamp: FileStamp, stat: os.stat_result, digest: Callable[[], str]) -> bool:
    """Same size, and the same content hash when one is known (a touch with the same size and mtime
    can still hide a change); mtime only for big files read in part."""
    if stat.st_size != stamp.size:
        return False
    if stamp.sha256 is not None:
        return digest() == stamp.sha256
    return stat.st_mtime_ns == stamp.mtime_ns


@dataclass
class SessionState:
    """Per-session state shared by every tool call of one conversation."""

    workspace: Path
    cwd: Path = field(default=Path())
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    settings: Settings = field(default_factory=Settings)
    file_reads: FileReadState = field(default_factory=FileReadState)
    todos: list[TodoItem] = field(default_factory=lambda: list[TodoItem]())
    tasks: TaskManager = field(default_factory=TaskManager)
    notebook_path: Path | None = None
    session_rules: list[str] = field(default_factory=lambda: list[str]())  # "Allow for session" answers
    notes: list[str] = field(default_factory=lambda: list[str]())  # for the model's next turn (a revert)

    def add_note(self, text: str) -> None:
        """Tell the model something that happened outside its turns (it reads it with the next prompt)."""
        self.notes.append(text)

    def drain_notes(self) -> list[str]:
        taken, self.notes = self.notes, []
        return taken

    @property
    def large_outputs_dir(self) -> Path:
        """Where results over the budget are stored, beside the session's JSONL (agent/session.py)."""
        return self.workspace / ".goat" / "sessions" / self.session_id / "outputs"

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.abspath(os.path.expanduser(self.workspace)))
        if self.cwd == Path():
            self.cwd = self.workspace
        self.cwd = Path(os.path.abspath(self.cwd))
