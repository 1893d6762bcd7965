"""The user's cell locks on the tools' side: look a cell up once, refuse what its tags forbid, and
refuse at run time a cell whose locks changed after the permission decision
(the rules themselves: permissions/cell_tags.py)."""

from __future__ import annotations

from goat_jupyter.errors import PermissionDeniedError
from goat_jupyter.live import CellInfo, cell_label
from goat_jupyter.permissions.cell_tags import CellAction, CellFacts, refusal, tags_of
from goat_jupyter.tools.context import ToolContext


def facts_of(cell: CellInfo) -> CellFacts:
    return CellFacts(cell_label(cell), cell.source, tags_of(cell.metadata), cell.id)


def address(notebook: object, cell_id: str) -> str:
    """The key a call's cell is remembered under: the notebook and cell as the call names them."""
    return f"{notebook}\x00{cell_id}"


def checked_before(action: CellAction, key: str, cell: CellInfo, ctx: ToolContext) -> CellFacts:
    """Precheck: refuse a cell the agent may never act on so; remember it for the decision."""
    facts = facts_of(cell)
    reason = refusal(action, facts)
    if reason is not None:
        raise PermissionDeniedError(reason)
    ctx.seen_cells[key] = facts
    return facts


def check_at_run(action: CellAction, key: str, cell: CellInfo, ctx: ToolContext) -> None:
    """Run: the cell as it is now. Its tags may have changed while the user decided."""
    now = facts_of(cell)
    reason = refusal(action, now)
    if reason is not None:
        raise PermissionDeniedError(reason)
    before = ctx.seen_cells.get(key)
    # Notebooks older than nbformat 4.5 get fresh ids on each read: the same source is the same cell.
    if before is not None and before.id != now.id and before.source != now.source:
        raise PermissionDeniedError(
            f"The address {key.split(chr(0))[-1]!r} now names another cell ({now.label}, was "
            f"{before.label}): the notebook changed during the permission check. Read it and call again."
        )
    added = now.locks - (before.locks if before is not None else frozenset())
    if added:
        raise PermissionDeniedError(
            f"{now.label} was tagged {', '.join(sorted(added))} after this call was checked, so it was "
            "not run. Call again: the user will be asked."
        )
