"""Per-cell review of goat's edits (issue 35), the kernel's side: NotebookEdit asks the labextension to
keep each live edit pending (`review: true` on the change request) while `review_edits` is on, and
nothing else does: not reads, not RunCell's outputs, not a revert, not an edit after a failed one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_raw_cell

from goat_jupyter.live import FileNotebook, find_cell
from goat_jupyter.live.live_notebook import LiveNotebook
from tests.notebook.test_comm_bridge import call, frontend_with_cells, make_executor
from tests.notebook.test_edits_land import nb_path, read_first
from tests.notebook_frontend import FakeNotebookFrontend

CHANGES = {"insert_cell", "replace_cell", "delete_cell", "set_outputs"}
EDITS: list[dict[str, Any]] = [
    {"cell_id": "cell-0", "new_source": "x = 2"},
    {"cell_id": "cell-0", "new_source": "# now markdown", "cell_type": "markdown"},
    {"cell_id": "cell-0", "new_source": "y = 1", "cell_type": "code", "edit_mode": "insert"},
    {"new_source": "at the top", "cell_type": "code", "edit_mode": "insert"},
    {"cell_id": "cell-2", "new_source": "", "edit_mode": "delete"},
]


def changes(frontend: FakeNotebookFrontend) -> list[dict[str, Any]]:
    return [request for request in frontend.requests if request.get("op") in CHANGES]


@pytest.mark.parametrize("edit", EDITS)
async def test_every_live_edit_asks_for_review(tmp_path: Path, edit: dict[str, Any]) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, _ = await read_first(tmp_path, frontend)
    out = await call(executor, "NotebookEdit", notebook_path=nb_path(tmp_path), **edit)
    assert not out.is_error, out.content
    sent = changes(frontend)
    assert sent and all(request.get("review") is True for request in sent), sent
    reads = [r for r in frontend.requests if r.get("op") == "list_cells"]
    assert reads and all("review" not in r for r in reads)


@pytest.mark.parametrize("edit", EDITS)
async def test_review_edits_off_sends_plain_edits(tmp_path: Path, edit: dict[str, Any]) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, _ = await read_first(tmp_path, frontend)
    executor.session.settings.review_edits = False
    out = await call(executor, "NotebookEdit", notebook_path=nb_path(tmp_path), **edit)
    assert not out.is_error, out.content
    assert changes(frontend) and all("review" not in request for request in changes(frontend))


async def test_a_failed_edit_leaves_no_review_behind(tmp_path: Path) -> None:
    """A frontend that acknowledges without applying makes the edit fail inside the review scope;
    the backend's next change (a revert's, say) must not be marked for review."""
    frontend = frontend_with_cells(tmp_path)
    executor, service = await read_first(tmp_path, frontend)
    frontend.mode = "ack"
    first = frontend.cells()[0]["id"]
    out = await call(executor, "NotebookEdit", notebook_path=nb_path(tmp_path), cell_id=first, new_source="z")
    assert out.is_error and "did not land" in out.content
    frontend.mode = "answer"
    frontend.requests.clear()
    backend = await service.backend_for(Path(nb_path(tmp_path)))
    assert isinstance(backend, LiveNotebook)
    await backend.insert_cell(None, "code", "restored")
    await backend.delete_cell(first)
    assert changes(frontend) and all("review" not in request for request in changes(frontend))


async def test_the_review_scope_ends_when_its_block_raises(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    _, service = make_executor(tmp_path, frontend)
    backend = await service.backend_for(Path(nb_path(tmp_path)))
    assert isinstance(backend, LiveNotebook)
    with pytest.raises(RuntimeError), backend.reviewed():
        await backend.insert_cell(None, "code", "inside")
        raise RuntimeError("boom")
    await backend.insert_cell(None, "code", "outside")
    marked = [request.get("review") for request in changes(frontend)]
    assert marked == [True, None]


async def test_runcell_outputs_are_not_marked_for_review(tmp_path: Path) -> None:
    """Only NotebookEdit's changes wait for Keep / Undo: RunCell's outputs are the kernel's."""
    frontend = frontend_with_cells(tmp_path)
    executor, service = make_executor(tmp_path, frontend)
    backend = await service.backend_for(Path(nb_path(tmp_path)))
    assert isinstance(backend, LiveNotebook)
    cell = frontend.cells()[0]["id"]
    await backend.set_outputs(cell, [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 2)
    await backend.replace_cell(cell, "x = 3")
    assert changes(frontend) and all("review" not in request for request in changes(frontend))
    assert executor.session.settings.review_edits is True, "on by default"


async def test_a_saved_placeholder_is_gone_for_the_agent_in_the_file_too(tmp_path: Path) -> None:
    """A notebook saved with a deletion awaiting review, read without JupyterLab: the placeholder is
    not a cell the agent sees (numbering and `cell-N` as in the live listing), and edits around it
    leave it where it is."""
    placeholder = new_raw_cell(
        "", metadata={"goat_review": {"kind": "deleted", "origin": "g", "before": {"cell_type": "code"}}}
    )
    lookalike = new_raw_cell("", metadata={"goat_review": {"kind": "edited"}})
    cells = [new_code_cell("a = 1", id="a"), placeholder, new_code_cell("b = 2", id="b"), lookalike]
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(new_notebook(cells=cells)))  # pyright: ignore[reportUnknownMemberType]
    backend = FileNotebook(path)
    listed = await backend.list_cells()
    assert [(cell.id, cell.index) for cell in listed] == [("a", 0), ("b", 1), (lookalike.id, 2)]
    assert find_cell(listed, "cell-1").id == "b"
    await backend.insert_cell("a", "code", "c = 3")
    await backend.save()
    saved = nbformat.read(path, as_version=4)  # pyright: ignore[reportUnknownMemberType]
    assert [cell.source for cell in saved.cells] == ["a = 1", "c = 3", "", "b = 2", ""]
