"""What a run changed (files, moves, cells) and what reverting it did: the records store and revert share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from goat_jupyter.checkpoints.files import Budget, PathState
from goat_jupyter.checkpoints.namespace import NamespaceChange
from goat_jupyter.live import CellInfo


@dataclass
class FileChange:
    path: Path
    before: PathState
    after: str  # fingerprint right after the tool: a different one later means someone else changed it


@dataclass
class MoveChange:
    source: Path
    target: Path
    target_before: PathState
    after: str


@dataclass
class CellChange:
    notebook: Path
    kind: Literal["insert", "replace", "delete", "outputs"]
    cell_id: str
    before: CellInfo | None = None
    previous_id: str | None = None  # delete: the cell above it at the time
    after: str | None = None  # insert/replace: cell_hash of what goat wrote


Change = FileChange | MoveChange | CellChange | NamespaceChange


@dataclass
class RunCheckpoint:
    """What one %%goat run changed, in order, and what it did that cannot be undone."""

    number: int
    label: str
    changes: list[Change] = field(default_factory=lambda: list[Change]())
    not_undone: list[str] = field(default_factory=lambda: list[str]())
    caveats: list[str] = field(default_factory=lambda: list[str]())  # what kernel code may have done besides
    reverted: bool = False
    budget: Budget = field(default_factory=Budget)

    @property
    def changed(self) -> bool:
        return any(not isinstance(c, NamespaceChange) or c.changed for c in self.changes)

    @property
    def copied_bytes(self) -> int:
        return sum(c.copied_bytes for c in self.changes if isinstance(c, NamespaceChange))

    def summary(self) -> str:
        files = {c.path for c in self.changes if isinstance(c, FileChange)}
        files |= {p for c in self.changes if isinstance(c, MoveChange) for p in (c.source, c.target)}
        cells = {c.cell_id for c in self.changes if isinstance(c, CellChange)}
        names = {n for c in self.changes if isinstance(c, NamespaceChange) for n in c.changed}
        parts = [f"{len(files)} file{'s' * (len(files) != 1)}"] if files else []
        parts += [f"{len(cells)} cell{'s' * (len(cells) != 1)}"] if cells else []
        parts += [f"{len(names)} kernel variable{'s' * (len(names) != 1)}"] if names else []
        return "This run changed " + " and ".join(parts or ["nothing that can be reverted"]) + "."


@dataclass
class RevertReport:
    run: RunCheckpoint
    done: list[str] = field(default_factory=lambda: list[str]())
    skipped: list[str] = field(default_factory=lambda: list[str]())
    not_undone: list[str] = field(default_factory=lambda: list[str]())
    caveats: list[str] = field(default_factory=lambda: list[str]())

    @property
    def partial(self) -> bool:
        """Something the run changed is not back: left as is, or impossible to undo."""
        return bool(self.skipped or self.not_undone)

    def headline(self, by: str | None = None) -> str:
        """`Reverted %%goat run 2 (label)`, or `Partly reverted ...; 1 left as is, 1 could not be undone`."""
        run = f"%%goat run {self.run.number} ({self.run.label})" + (f" by {by}" if by else "")
        if not self.partial:
            return f"Reverted {run}"
        short = [f"{len(self.skipped)} left as is"] if self.skipped else []
        short += [f"{len(self.not_undone)} could not be undone"] if self.not_undone else []
        return f"Partly reverted {run}; {', '.join(short)}"

    def text(self) -> str:
        lines = [f"{self.headline()}:"]
        lines += [f"  - {item}" for item in self.done] or ["  (nothing needed restoring)"]
        if self.skipped:
            lines += ["Left as is:", *(f"  - {item}" for item in self.skipped)]
        if self.not_undone:
            lines += ["Could not be undone:", *(f"  - {item}" for item in self.not_undone)]
        if self.caveats:
            lines += [
                "Not covered by a revert, if the code did any of it:",
                *(f"  - {c}" for c in self.caveats),
            ]
        return "\n".join(lines)
