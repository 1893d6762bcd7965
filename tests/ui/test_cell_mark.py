"""The mark a NotebookEdit approval shows at its cell (issue 35, point 2), as the preview builds it from the
live notebook: the diff at the edited cell, the cell a delete removes, the new source after the cell an
insert follows (below the running %%goat cell when no cell is named); none from the file backend; and
what people see in it is cleaned like the approval card (no known key, workspace-relative paths)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from goat_jupyter.permissions.policy import ApprovalRequest
from goat_jupyter.ui.approval import for_people
from goat_jupyter.ui.preview import build_preview
from tests.notebook.test_comm_bridge import frontend_with_cells, make_executor

SECRET = "sk-test-0123456789abcdefghijklmnop"


def notebook_path(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "nb.ipynb"
    path.parent.mkdir(exist_ok=True)
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("x = 1")])))  # pyright: ignore[reportUnknownMemberType]
    return path


async def mark_of(tmp_path: Path, running: str | None = None, **args: Any) -> Any:
    frontend = frontend_with_cells(tmp_path)
    _, service = make_executor(tmp_path, frontend)
    if running is not None:
        service.running_cell_id = frontend.cells()[int(running)]["id"]
    args = {"notebook_path": str(notebook_path(tmp_path)), **args}
    preview = await build_preview("NotebookEdit", args, tmp_path, service)
    return preview, [cell["id"] for cell in frontend.cells()]


async def test_an_edit_is_marked_at_its_cell_with_the_diff(tmp_path: Path) -> None:
    preview, ids = await mark_of(tmp_path, cell_id="cell-2", new_source="x * 2")
    mark = preview.mark
    assert mark is not None and (mark.kind, mark.cell_id, mark.locks) == ("edit", ids[2], True)
    assert mark.diff == preview.text and "-x\n" in mark.diff and "+x * 2" in mark.diff
    assert mark.request()["mark"]["kind"] == "edit" and mark.request()["lock"] is True


async def test_a_delete_marks_the_cell_it_removes(tmp_path: Path) -> None:
    preview, ids = await mark_of(tmp_path, cell_id=None, new_source="", edit_mode="delete")
    assert preview.mark is None, "a delete without a cell id fails; nothing is marked"
    preview, ids = await mark_of(tmp_path, cell_id="cell-1", new_source="", edit_mode="delete")
    assert preview.mark is not None and (preview.mark.kind, preview.mark.cell_id) == ("delete", ids[1])


@pytest.mark.parametrize(("running", "after"), [(None, None), ("1", 1)])
async def test_an_insert_is_marked_where_the_new_cell_goes(
    tmp_path: Path, running: str | None, after: int | None
) -> None:
    args = {"new_source": "y = 2", "cell_type": "markdown", "edit_mode": "insert"}
    preview, ids = await mark_of(tmp_path, running, **args)
    mark = preview.mark
    assert mark is not None and mark.kind == "insert" and not mark.locks
    assert mark.cell_id == ("" if after is None else ids[after])
    assert (mark.source, mark.cell_type) == ("y = 2", "markdown")
    place = "at the top" if after is None else "after cell 2"
    assert place in preview.text, "the card names the same place as the mark"
    named, ids = await mark_of(tmp_path, "1", cell_id="cell-0", **args)
    assert named.mark is not None and named.mark.cell_id == ids[0], "a named cell wins over the running one"


async def test_the_file_backend_marks_nothing(tmp_path: Path) -> None:
    path = notebook_path(tmp_path)
    preview = await build_preview(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-0", "new_source": "x = 5"}, tmp_path
    )
    assert preview.mark is None and "+x = 5" in preview.text


async def test_what_the_mark_shows_is_cleaned_like_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    source = f"key = '{SECRET}'\nopen('{tmp_path}/work/data.csv')"
    for args in (
        {"cell_id": "cell-2", "new_source": source},
        {"cell_id": "cell-0", "new_source": source, "cell_type": "code", "edit_mode": "insert"},
    ):
        preview, _ = await mark_of(tmp_path, **args)
        assert preview.mark is not None and SECRET in preview.mark.diff + preview.mark.source
        request = ApprovalRequest("NotebookEdit", args, "NotebookEdit", "diff", None, "")
        _, shown = for_people(request, preview, str(tmp_path))
        assert shown.mark is not None
        seen = shown.mark.diff + shown.mark.source
        assert SECRET not in seen and str(tmp_path) not in seen and "work/data.csv" in seen
