"""NotebookEdit proves its edits landed: it reads the cell back from the notebook (live or file) and a
frontend that answers "ok" without applying is an error, never a success. The approval diff is taken
from the live cell (unsaved edits, never-saved notebooks), and one cell numbering is used throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook

from goat_jupyter.live import CellInfo, address_label, cell_label
from goat_jupyter.tools.notebook.notebook_edit import NotebookEditInput, NotebookEditTool
from goat_jupyter.tools.notebook.run_cell import RunCellInput, RunCellTool
from goat_jupyter.ui.preview import build_preview
from goat_jupyter.ui.text import compact_input
from tests.notebook.test_comm_bridge import call, frontend_with_cells, make_executor
from tests.notebook_frontend import FakeNotebookFrontend


def nb_path(tmp_path: Path) -> str:
    return str(tmp_path / "work" / "nb.ipynb")


async def read_first(tmp_path: Path, frontend: FakeNotebookFrontend) -> Any:
    path = Path(nb_path(tmp_path))
    path.parent.mkdir(exist_ok=True)
    path.write_text(nbformat.writes(new_notebook(cells=[])))  # pyright: ignore[reportUnknownMemberType]
    executor, service = make_executor(tmp_path, frontend)
    read = await call(executor, "Read", file_path=nb_path(tmp_path))
    assert not read.is_error, read.content
    return executor, service


@pytest.mark.parametrize(
    "edit",
    [
        {"cell_id": "cell-0", "new_source": "x = 2"},
        {"cell_id": "cell-0", "new_source": "# now markdown", "cell_type": "markdown"},
        {"cell_id": "cell-0", "new_source": "y = 1", "cell_type": "code", "edit_mode": "insert"},
        {"new_source": "at the top", "cell_type": "code", "edit_mode": "insert"},
        {"cell_id": "cell-2", "new_source": "", "edit_mode": "delete"},
    ],
)
async def test_a_frontend_that_acknowledges_without_applying_is_an_error(
    tmp_path: Path, edit: dict[str, Any]
) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, _ = await read_first(tmp_path, frontend)
    before = [dict(c) for c in frontend.cells()]
    frontend.mode = "ack"
    out = await call(executor, "NotebookEdit", notebook_path=nb_path(tmp_path), **edit)
    assert out.is_error, out.content
    assert "did not land" in out.content and "Replaced" not in out.content and "Inserted" not in out.content
    assert frontend.cells() == before


async def test_a_normal_edit_echoes_the_cell_as_read_back(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, _ = await read_first(tmp_path, frontend)
    first = frontend.cells()[0]["id"]
    out = await call(
        executor, "NotebookEdit", notebook_path=nb_path(tmp_path), cell_id=first, new_source="x = 42"
    )
    assert not out.is_error, out.content
    assert f"Read back, cell 1 (id {first}) is now a code cell:\nx = 42" in out.content
    assert out.metadata["cell_number"] == 1
    reads = [r["op"] for r in frontend.requests]
    assert reads.index("replace_cell") < len(reads) - 1 and reads[-1] == "list_cells", "read after the edit"


async def test_a_frontend_that_applies_something_else_is_an_error(tmp_path: Path) -> None:
    """It applied an edit, but not the one asked for (a stripped or rewritten source)."""
    frontend = frontend_with_cells(tmp_path)
    executor, _ = await read_first(tmp_path, frontend)
    original = frontend._op_replace_cell  # pyright: ignore[reportPrivateUsage]

    def mangled(request: dict[str, Any]) -> dict[str, Any]:
        return original({**request, "source": request["source"].strip()})

    frontend._op_replace_cell = mangled  # type: ignore[method-assign]
    first = frontend.cells()[0]["id"]
    out = await call(
        executor, "NotebookEdit", notebook_path=nb_path(tmp_path), cell_id=first, new_source="x = 3\n\n"
    )
    assert out.is_error and "does not hold the new source" in out.content and "x = 3" in out.content


async def test_a_silent_frontend_is_an_error(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, service = await read_first(tmp_path, frontend)
    service.bridge.request_timeout = 0.1
    frontend.mode = "silent"
    out = await call(
        executor, "NotebookEdit", notebook_path=nb_path(tmp_path), cell_id="cell-0", new_source="z"
    )
    assert out.is_error and "did not answer" in out.content


async def test_the_file_backend_reads_the_file_back_and_says_it_was_a_fallback(tmp_path: Path) -> None:
    path = Path(nb_path(tmp_path))
    path.parent.mkdir()
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("a = 1")])))  # pyright: ignore[reportUnknownMemberType]
    frontend = frontend_with_cells(tmp_path, "close")
    executor, _ = make_executor(tmp_path, frontend)
    assert not (await call(executor, "Read", file_path=str(path))).is_error
    out = await call(executor, "NotebookEdit", notebook_path=str(path), cell_id="cell-0", new_source="a = 5")
    assert not out.is_error, out.content
    assert "is now a code cell:\na = 5" in out.content
    assert "on disk, not the live notebook" in out.content and "Reload Notebook from Disk" in out.content
    assert nbformat.read(path, 4).cells[0].source == "a = 5"  # pyright: ignore[reportUnknownMemberType]


async def test_the_approval_diff_is_taken_from_the_live_cell_with_unsaved_edits(tmp_path: Path) -> None:
    path = Path(nb_path(tmp_path))
    path.parent.mkdir()
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("a = 1")])))  # pyright: ignore[reportUnknownMemberType]
    frontend = frontend_with_cells(tmp_path)
    _, service = make_executor(tmp_path, frontend)
    frontend.user_edit(frontend.cells()[0]["id"], "a = 2")
    args = {"notebook_path": str(path), "cell_id": "cell-0", "new_source": "a = 4"}
    preview = await build_preview("NotebookEdit", args, tmp_path, service)
    assert "-a = 2" in preview.text and "+a = 4" in preview.text and "a = 1" not in preview.text
    assert "cell 1 of 3" in preview.text


async def test_a_never_saved_notebook_still_gets_a_real_diff(tmp_path: Path) -> None:
    path = Path(nb_path(tmp_path))
    path.parent.mkdir()
    path.write_text(nbformat.writes(new_notebook(cells=[])))  # pyright: ignore[reportUnknownMemberType]
    frontend = frontend_with_cells(tmp_path)
    _, service = make_executor(tmp_path, frontend)
    args = {"notebook_path": str(path), "cell_id": "cell-2", "new_source": "x + 1"}
    preview = await build_preview("NotebookEdit", args, tmp_path, service)
    assert "-x" in preview.text and "+x + 1" in preview.text and "No preview" not in preview.text
    missing = {**args, "notebook_path": str(tmp_path / "work" / "missing.ipynb")}
    assert "No preview" in (await build_preview("NotebookEdit", missing, tmp_path, service)).text


async def test_one_numbering_in_approval_result_and_transcript(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, service = await read_first(tmp_path, frontend)
    third = frontend.cells()[2]["id"]
    args = {"notebook_path": nb_path(tmp_path), "cell_id": "cell-2"}
    approval = await build_preview("RunCell", args, tmp_path, service)
    assert approval.text.startswith(f"Cell 3 of 3 (id {third}) in nb.ipynb")
    edit = await call(executor, "NotebookEdit", **args, new_source="x * 2")
    assert f"cell 3 (id {third})" in edit.content and "index" not in edit.content
    assert RunCellTool().title_for(RunCellInput(cell_id="cell-2")) == "Run cell 3"
    edit_input = NotebookEditInput(notebook_path="nb.ipynb", cell_id="cell-2", new_source="")
    assert NotebookEditTool().title_for(edit_input) == "NotebookEdit replace cell 3 in nb.ipynb"
    assert compact_input("RunCell", {"cell_id": "cell-2"}) == "cell 3"


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(min_value=0, max_value=10_000), total=st.integers(min_value=1, max_value=10_001))
def test_labels_agree_for_every_index(index: int, total: int) -> None:
    cell = CellInfo("abc", index, "code", "")
    assert cell_label(cell, total).startswith(address_label(f"cell-{index}") + " of ")
    assert address_label(f"  cell-{index} ") == f"cell {index + 1}"
    assert address_label("abc") == "cell abc"
