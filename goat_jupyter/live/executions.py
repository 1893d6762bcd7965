"""What the kernel ran: one record per execution (cell id, execution count, a hash of the source that
ran, the names it bound), and from it each cell's state against the notebook as it is now."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from goat_jupyter.live.bridge import CellInfo, cell_label

MAX_RECORDS = 5_000


def source_hash(source: str) -> str:
    """Trailing whitespace does not make a cell stale; any other change does."""
    return hashlib.sha256(source.rstrip().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Execution:
    """One run of code in the kernel: by the user (a cell) or by goat (RunCell)."""

    cell_id: str | None
    count: int
    source_hash: str
    names: frozenset[str]
    by_agent: bool = False
    mutated: frozenset[str] = frozenset()  # names whose objects the code may change in place
    reads: frozenset[str] = frozenset()  # names it read before binding them: what it took from the kernel
    writes: frozenset[str] = frozenset()  # names whose objects it surely changed in place (`df["a"] = 1`)

    @property
    def changed(self) -> frozenset[str]:
        """What the run changed for a cell that reads these names: rebound or written into."""
        return self.names | self.writes


@dataclass(frozen=True)
class Change:
    """Names a cell read that a later execution (of another cell) changed; `by` names that execution."""

    names: tuple[str, ...]
    by: str

    def describe(self) -> str:
        which = ", ".join(f"`{name}`" for name in self.names[:3]) + (", …" if len(self.names) > 3 else "")
        return f"stale: reads {which}, which {self.by} changed after this cell ran"


@dataclass(frozen=True)
class CellState:
    """A cell against the kernel: never ran here, or ran as [count], maybe edited or stale since
    (marimo's rule, as the labextension's markers: it reads a variable another cell changed after it ran)."""

    cell: CellInfo
    ran: Execution | None
    edited: bool = False
    changed: Change | None = None

    @property
    def stale(self) -> bool:
        return self.edited or self.changed is not None

    def describe(self) -> str:
        if self.ran is None:
            return "never ran in this kernel"
        parts = [f"ran as [{self.ran.count}]"]
        if self.edited:
            parts.append("edited since it ran")
        if self.changed is not None:
            parts.append(self.changed.describe())
        return ", ".join(parts)


class ExecutionLog:
    """The kernel's executions since goat was loaded, newest last (bounded)."""

    def __init__(self) -> None:
        self.records: deque[Execution] = deque(maxlen=MAX_RECORDS)
        self.added = 0  # records ever added: a mark for `since`

    def add(self, record: Execution) -> None:
        self.records.append(record)
        self.added += 1

    def since(self, mark: int) -> list[Execution]:
        """The records added after `mark` (as many as are still kept)."""
        count = min(self.added - mark, len(self.records))
        return list(self.records)[-count:] if count > 0 else []

    def last_for_cell(self, cell_id: str) -> Execution | None:
        return next((r for r in reversed(self.records) if r.cell_id == cell_id), None)

    def last_binding(self, name: str) -> Execution | None:
        return next((r for r in reversed(self.records) if name in r.names), None)

    def states(self, cells: Sequence[CellInfo]) -> list[CellState]:
        """Each code cell's state (not %%goat prompts: they bind and read nothing)."""
        code = [c for c in cells if c.cell_type == "code" and not c.source.lstrip().startswith("%%goat")]
        records = list(self.records)
        last = {r.cell_id: i for i, r in enumerate(records) if r.cell_id is not None}
        states: list[CellState] = []
        for cell in code:
            if cell.id not in last:
                states.append(CellState(cell, None))
                continue
            record = records[last[cell.id]]
            edited = record.source_hash != source_hash(cell.source)
            changed = _changed_after(record, records[last[cell.id] + 1 :], cells)
            states.append(CellState(cell, record, edited, changed))
        return states

    def binding_note(self, name: str, cells: Sequence[CellInfo] | None) -> str | None:
        """Which execution last bound `name`, and whether its cell changed since (None: unknown)."""
        record = self.last_binding(name)
        if record is None:
            return None
        by = "goat's RunCell" if record.by_agent else "the user"
        cell = None if cells is None else next((c for c in cells if c.id == record.cell_id), None)
        if record.cell_id is None:
            return f"`{name}` was last set by execution [{record.count}] (run by {by})"
        where = cell_label(cell) if cell is not None else f"cell {record.cell_id}"
        text = f"`{name}` was last set by {where}, execution [{record.count}] (run by {by})"
        if cells is not None and cell is None:
            return text + ", a cell no longer in the notebook"
        if cell is not None and source_hash(cell.source) != record.source_hash:
            text += ", whose source has changed since: the value comes from the old source"
        return text + self._written_since(name, record, cells or [])

    def _written_since(self, name: str, bound: Execution, cells: Sequence[CellInfo]) -> str:
        """`; changed in place since by …` when a later execution wrote into the object."""
        records = list(self.records)
        later = records[len(records) - records[::-1].index(bound) :]
        writer = next((r for r in reversed(later) if name in r.writes), None)
        return "" if writer is None else f"; changed in place since by {_execution_label(writer, cells)}"


def stale_summary(states: Iterable[CellState]) -> str | None:
    """One line per stale cell, for the model's system reminder (None when nothing is stale)."""
    lines = [f"- {cell_label(s.cell)}: {s.describe()}; names it set: {_names(s)}" for s in states if s.stale]
    if not lines:
        return None
    return (
        "Kernel state vs the notebook: these cells do not match what the kernel ran. Variables they set "
        "come from what ran, not from the source you see; re-run them (RunCell) before relying on them:\n"
        + "\n".join(lines)
    )


def _changed_after(ran: Execution, later: Sequence[Execution], cells: Sequence[CellInfo]) -> Change | None:
    """The latest execution after `ran` that changed a name `ran` read (None: nothing it read changed)."""
    for record in reversed(later):
        names = sorted(record.changed & ran.reads)
        if names:
            return Change(tuple(names), _execution_label(record, cells))
    return None


def _execution_label(record: Execution, cells: Sequence[CellInfo]) -> str:
    cell = next((c for c in cells if c.id == record.cell_id), None)
    return cell_label(cell) if cell is not None else f"execution [{record.count}]"


def _names(state: CellState) -> str:
    names = sorted(state.ran.names) if state.ran is not None else []
    return ", ".join(names[:10]) + (" …" if len(names) > 10 else "") if names else "none"
