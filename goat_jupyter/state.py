"""The part of a session that tools read and change: paths, file-read records, todos, tasks."""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from goat_jupyter.errors import ConflictError
from goat_jupyter.settings import Settings
from goat_jupyter.tasks import TaskManager

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str
    status: TodoStatus
    activeForm: str  # noqa: N815 - the seed's field name


@dataclass(frozen=True)
class FileStamp:
    """What the session knew about a file when it last read or wrote it."""

    mtime_ns: int
    size: int
    sha256: str | None  # None when only part of a large file was read


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FileReadState:
    """Read-before-write bookkeeping (TOOLS.md common rules)."""

    def __init__(self) -> None:
        self._stamps: dict[str, FileStamp] = {}

    def record(self, path: Path, *, content_hash: bool = True) -> None:
        stat = path.stat()
        digest = file_digest(path) if content_hash else None
        self._stamps[str(path)] = FileStamp(stat.st_mtime_ns, stat.st_size, digest)

    def forget(self, path: Path) -> None:
        self._stamps.pop(str(path), None)

    def was_read(self, path: Path) -> bool:
        return str(path) in self._stamps

    def check_writable(self, path: Path) -> None:
        """Raise ConflictError unless an existing file was read and is unchanged since."""
        if not path.exists():
            return
        stamp = self._stamps.get(str(path))
        if stamp is None:
            raise ConflictError(
                f"{path} exists but has not been read in this session. Read it first, then retry the change."
            )
        stat = path.stat()
        if stat.st_mtime_ns == stamp.mtime_ns and stat.st_size == stamp.size:
            return
        if stamp.sha256 is not None and stat.st_size == stamp.size and file_digest(path) == stamp.sha256:
            return
        raise ConflictError(
            f"{path} was modified since it was last read (by the user or another process). "
            "Read it again before changing it."
        )


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

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.abspath(os.path.expanduser(self.workspace)))
        if self.cwd == Path():
            self.cwd = self.workspace
        self.cwd = Path(os.path.abspath(self.cwd))
