"""The kernel's state against the notebook: which cells are stale, for KernelInspect and the reminder."""

from __future__ import annotations

import ast

from goat_jupyter.errors import GoatError
from goat_jupyter.live import CellInfo, FileNotebook
from goat_jupyter.live.executions import ExecutionLog, stale_summary
from goat_jupyter.state import SessionState
from goat_jupyter.tools.context import Services


async def own_cells(services: Services, session: SessionState) -> list[CellInfo] | None:
    """The cells of this kernel's notebook as they are now (live when open); None when unknown."""
    bridge = services.bridge
    if bridge is not None and not bridge.probe:
        bridge = None  # no frontend ran this cell: the file, without telling the user about the bridge
    try:
        path = (await bridge.owner_path() if bridge is not None else None) or session.notebook_path
        if path is None:
            return None
        backend = await bridge.backend_for(path) if bridge is not None else FileNotebook(path)
        return await backend.list_cells()
    except (GoatError, OSError):
        return None


def binding_notes(log: ExecutionLog, expression: str, cells: list[CellInfo] | None) -> list[str]:
    """For each name the expression reads, which execution last bound it."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return []
    names = sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)})
    states = {state.cell.id: state for state in log.states(cells)} if cells is not None else {}
    notes: list[str] = []
    for name in names:
        note = log.binding_note(name, cells)
        if note is None:
            continue
        record = log.last_binding(name)
        state = states.get(record.cell_id or "") if record is not None else None
        if state is not None and state.changed is not None and state.ran == record:
            note += f"; that cell is {state.changed.describe()}"
        notes.append(note)
    return notes


class StaleReminder:
    """At the start of each %%goat run, tell the model about stale cells once (again only if they change)."""

    def __init__(self) -> None:
        self.told: str | None = None

    async def remind(self, services: Services, session: SessionState) -> None:
        log = services.executions
        if log is None or not any(record.cell_id for record in log.records):
            return
        cells = await own_cells(services, session)
        summary = None if cells is None else stale_summary(log.states(cells))
        if summary is not None and summary != self.told:
            session.add_note(summary)
        self.told = summary
