"""What the notebook shows at the cell an approval is about, until the answer: the cell RunCell would
run, the cell a NotebookEdit changes (with its diff) or deletes, the place an insert goes (with the
new source). The labextension draws it (approval_mark.ts); a tab that reloads meanwhile gets it back
with the open prompt (kernel/live.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from goat_jupyter.errors import GoatError

MarkKind = Literal["run", "edit", "insert", "delete"]


@dataclass(frozen=True)
class CellMark:
    kind: MarkKind
    cell_id: str  # the cell run, changed or deleted; for an insert the cell it follows ("" = the top)
    path: str | None = None  # the notebook as the frontend names it; None: the kernel's own
    diff: str = ""  # edit: the unified diff the approval card shows
    source: str = ""  # insert: the new cell's source
    cell_type: str = "code"

    @property
    def locks(self) -> bool:
        """The cell stays read-only while the user decides, so a keystroke cannot change what is approved."""
        return self.kind != "insert"

    def request(self) -> dict[str, Any]:
        """The `reveal_cell` request's arguments (also what a reloaded tab gets to draw it again)."""
        mark = {"kind": self.kind, "diff": self.diff, "source": self.source, "cell_type": self.cell_type}
        return {"cell_id": self.cell_id, "path": self.path, "lock": self.locks, "mark": mark}

    def cleaned(self, words: Callable[[str], str]) -> CellMark:
        """The mark with the text people see passed through `words` (relative paths, no known key)."""
        return dataclasses.replace(self, diff=words(self.diff), source=words(self.source))


_shown: dict[str, CellMark] = {}  # by the model id of the prompt they belong to


def shown(prompt_model_id: str) -> dict[str, Any] | None:
    """The open prompt's mark as a reloaded tab draws it, if it has one."""
    mark = _shown.get(prompt_model_id)
    return None if mark is None else mark.request()


async def show(notebook: Any, mark: CellMark, prompt_model_id: str) -> None:
    """Ask the labextension to scroll to the cell, highlight it and draw the change there (older
    labextensions only highlight; without one nothing is shown and nothing fails)."""
    if prompt_model_id:
        _shown[prompt_model_id] = mark
    try:
        await notebook.bridge.request("reveal_cell", **mark.request())
    except GoatError:
        return


async def hide(notebook: Any, mark: CellMark, prompt_model_id: str) -> None:
    """The answer came (or the run stopped): the highlight, the lock and the drawn change go."""
    _shown.pop(prompt_model_id, None)
    try:
        await notebook.bridge.request("release_cell", cell_id=mark.cell_id, path=mark.path)
    except GoatError:
        return
