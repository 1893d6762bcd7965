"""The cells a `%%goat` run inserted or changed, listed in its footer as links to them.

A link is `<a href="#goat-cell=ID" data-goat-cell="ID">`; the labextension turns a click on it into
scrolling to that cell (without the extension it is an inert fragment link).
"""

from __future__ import annotations

from html import escape

from goat_jupyter.tools.events import ToolFinished
from goat_jupyter.ui import style

LINK = "color:" + style.BLUE + ";cursor:pointer"


class MadeCells:
    """Per run: cell id -> how it is named ("cell 3") and what goat did to it, in order."""

    def __init__(self) -> None:
        self._cells: dict[str, tuple[str, str]] = {}

    def note(self, event: ToolFinished) -> None:
        meta = event.output.metadata
        cell_id = meta.get("cell_id")
        if event.name != "NotebookEdit" or event.output.is_error or not isinstance(cell_id, str):
            return
        if meta.get("edit_mode") == "delete":
            self._cells.pop(cell_id, None)
            return
        number = meta.get("cell_number")
        label = f"cell {number}" if isinstance(number, int) else f"cell {cell_id}"
        did = self._cells.get(cell_id, ("", "inserted" if meta.get("edit_mode") == "insert" else "changed"))[
            1
        ]
        self._cells[cell_id] = (label, did)

    def text(self) -> str:
        """` · made cell 3, changed cell 1` ("" when the run wrote no cell)."""
        return "".join(f" · {did} {label}" for label, did in self._cells.values())

    def html(self) -> str:
        links = [
            f'{did} <a href="#goat-cell={escape(cell_id)}" data-goat-cell="{escape(cell_id)}" '
            f'style="{LINK}" title="Show this cell">{escape(label)}</a>'
            for cell_id, (label, did) in self._cells.items()
        ]
        return "".join(f" · {link}" for link in links)
