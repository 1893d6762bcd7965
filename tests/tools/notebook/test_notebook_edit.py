"""NotebookEdit on real .ipynb files: replace, insert, delete, ids, read-before-write, format."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from goat_jupyter.live import FileNotebook, NotebookBackend, find_cell
from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.notebook.notebook_provenance import source_hash


def make_notebook(path: Path, minor: int = 5) -> list[str]:
    """Three cells (code with output, markdown, code); returns their ids."""
    nb = new_notebook()
    nb.cells = [
        new_code_cell(
            "x = 1\nx",
            execution_count=3,
            outputs=[new_output("execute_result", data={"text/plain": "1"}, execution_count=3)],
        ),
        new_markdown_cell("# Title"),
        new_code_cell("print(x)", execution_count=4),
    ]
    ids = [str(c.id) for c in nb.cells]
    if minor < 5:
        nb.nbformat_minor = minor
        for cell in nb.cells:
            del cell["id"]
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return ids


def load(path: Path) -> Any:
    """The notebook as saved, with nbformat joining each cell's source lines."""
    return nbformat.read(path, as_version=4)


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


@pytest.fixture
def notebook(tmp_path: Path, registry: Registry) -> tuple[Path, list[str]]:
    path = tmp_path / "analysis.ipynb"
    ids = make_notebook(path)
    registry.session.file_reads.record(path)  # what Read does after reading the notebook
    return path, ids


async def test_replace_code_cell_clears_outputs_and_marks_goat(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, ids = notebook
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": ids[0], "new_source": "y = 2"}
    )
    assert not out.is_error, out.content
    assert "cleared" in out.content and ids[0] in out.content
    cell = load(path)["cells"][0]
    assert cell["source"] == "y = 2"
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["id"] == ids[0]
    session = registry.session
    assert cell["metadata"]["goat"] == {
        "session": session.session_id,
        "model": session.settings.model,
        "source_hash": source_hash("y = 2"),
    }
    assert out.metadata["cell_id"] == ids[0] and out.metadata["edit_mode"] == "replace"


async def test_file_is_valid_nbformat_with_one_space_indent(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, ids = notebook
    await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": ids[1], "new_source": "## New"}
    )
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[1] == ' "cells": ['
    assert text.endswith("}\n")
    nbformat.validate(nbformat.reads(text, as_version=4))


async def test_replace_by_index_reference(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, ids = notebook
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-2", "new_source": "z"}
    )
    assert not out.is_error, out.content
    cells = load(path)["cells"]
    assert cells[2]["source"] == "z" and cells[2]["id"] == ids[2]
    assert cells[0]["source"] == "x = 1\nx"


async def test_replace_markdown_keeps_it_markdown(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, ids = notebook
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": ids[1], "new_source": "text"}
    )
    cell = load(path)["cells"][1]
    assert cell["cell_type"] == "markdown" and cell["source"] == "text"
    assert "outputs" not in cell and "cleared" not in out.content


async def test_replace_changes_cell_type_both_ways(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, ids = notebook
    args = {
        "notebook_path": str(path),
        "cell_id": ids[0],
        "new_source": "Now *prose*",
        "cell_type": "markdown",
    }
    out = await registry.call("NotebookEdit", args)
    assert not out.is_error, out.content
    cell = load(path)["cells"][0]
    assert cell["cell_type"] == "markdown" and cell["id"] == ids[0]
    assert "outputs" not in cell and "execution_count" not in cell
    args = {"notebook_path": str(path), "cell_id": ids[1], "new_source": "1 + 1", "cell_type": "code"}
    await registry.call("NotebookEdit", args)
    cell = load(path)["cells"][1]
    assert cell["cell_type"] == "code" and cell["outputs"] == [] and cell["execution_count"] is None
    assert out.metadata["cell_type"] == "markdown"


async def test_insert_after_cell_returns_fresh_id(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, ids = notebook
    args = {"notebook_path": str(path), "cell_id": ids[0], "new_source": "df.head()", "edit_mode": "insert",
            "cell_type": "code"}  # fmt: skip
    out = await registry.call("NotebookEdit", args)
    assert not out.is_error, out.content
    cells = load(path)["cells"]
    assert [c["source"] for c in cells] == ["x = 1\nx", "df.head()", "# Title", "print(x)"]
    new_id = out.metadata["cell_id"]
    assert cells[1]["id"] == new_id and new_id not in ids and new_id in out.content
    assert cells[1]["metadata"]["goat"]["session"] == registry.session.session_id


async def test_insert_without_cell_id_goes_to_top(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, _ = notebook
    args = {
        "notebook_path": str(path),
        "new_source": "# Intro",
        "edit_mode": "insert",
        "cell_type": "markdown",
    }
    out = await registry.call("NotebookEdit", args)
    assert not out.is_error, out.content
    first = load(path)["cells"][0]
    assert first["cell_type"] == "markdown" and first["source"] == "# Intro"
    assert "top" in out.content


async def test_insert_after_index_reference(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, _ = notebook
    args = {"notebook_path": str(path), "cell_id": "cell-2", "new_source": "end", "edit_mode": "insert",
            "cell_type": "code"}  # fmt: skip
    await registry.call("NotebookEdit", args)
    assert load(path)["cells"][-1]["source"] == "end"


async def test_insert_needs_cell_type(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, _ = notebook
    before = path.read_bytes()
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "new_source": "x", "edit_mode": "insert"}
    )
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert "cell_type" in out.content
    assert path.read_bytes() == before


async def test_delete_by_id_and_by_index(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, ids = notebook
    out = await registry.call(
        "NotebookEdit",
        {"notebook_path": str(path), "cell_id": ids[1], "new_source": "", "edit_mode": "delete"},
    )
    assert not out.is_error, out.content
    assert [c["id"] for c in load(path)["cells"]] == [ids[0], ids[2]]
    await registry.call(
        "NotebookEdit",
        {"notebook_path": str(path), "cell_id": "cell-0", "new_source": "", "edit_mode": "delete"},
    )
    assert [c["id"] for c in load(path)["cells"]] == [ids[2]]


async def test_unknown_cell_id_says_how_to_find_ids(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, _ = notebook
    before = path.read_bytes()
    for ref in ("nope", "cell-3"):
        out = await registry.call(
            "NotebookEdit", {"notebook_path": str(path), "cell_id": ref, "new_source": "x"}
        )
        assert out.is_error and out.error_code == "INVALID_INPUT"
        assert ref in out.content and "Read" in out.content and "cell-N" in out.content
        assert "cell-0 to cell-2" in out.content
    assert path.read_bytes() == before


async def test_replace_without_cell_id_is_an_error(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, _ = notebook
    out = await registry.call("NotebookEdit", {"notebook_path": str(path), "new_source": "x"})
    assert out.is_error and out.error_code == "INVALID_INPUT" and "cell_id" in out.content


async def test_unread_notebook_is_a_conflict(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "fresh.ipynb"
    make_notebook(path)
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-0", "new_source": "x"}
    )
    assert out.is_error and out.error_code == "CONFLICT" and "Read" in out.content


async def test_notebook_changed_on_disk_is_a_conflict(
    registry: Registry, notebook: tuple[Path, list[str]]
) -> None:
    path, _ = notebook
    data = load(path)
    data["cells"][0]["source"] = "changed by the user"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-0", "new_source": "x"}
    )
    assert out.is_error and out.error_code == "CONFLICT"
    assert load(path)["cells"][0]["source"] == "changed by the user"


async def test_consecutive_edits_need_no_reread(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, _ = notebook
    for n in range(3):
        out = await registry.call(
            "NotebookEdit",
            {
                "notebook_path": str(path),
                "new_source": f"step {n}",
                "edit_mode": "insert",
                "cell_type": "code",
            },
        )
        assert not out.is_error, out.content
    assert [c["source"] for c in load(path)["cells"][:3]] == ["step 2", "step 1", "step 0"]


async def test_old_minor_version_gets_ids(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "old.ipynb"
    make_notebook(path, minor=4)
    registry.session.file_reads.record(path)
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-1", "new_source": "md"}
    )
    assert not out.is_error, out.content
    data = load(path)
    assert data["nbformat_minor"] == 5
    ids = [c["id"] for c in data["cells"]]
    assert len(set(ids)) == 3 and all(ids)
    assert data["cells"][1]["source"] == "md"


async def test_relative_path_and_file_mode_kept(registry: Registry, notebook: tuple[Path, list[str]]) -> None:
    path, _ = notebook
    os.chmod(path, 0o640)
    registry.session.file_reads.record(path)
    out = await registry.call(
        "NotebookEdit", {"notebook_path": path.name, "cell_id": "cell-0", "new_source": "a"}
    )
    assert not out.is_error, out.content
    assert str(path) in out.content
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind


async def test_wrong_extension_missing_file_and_broken_json(registry: Registry, tmp_path: Path) -> None:
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hi")
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(text_file), "cell_id": "cell-0", "new_source": "x"}
    )
    assert out.error_code == "INVALID_INPUT" and "Edit" in out.content
    missing = tmp_path / "missing.ipynb"
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(missing), "cell_id": "cell-0", "new_source": "x"}
    )
    assert out.error_code == "FILE_NOT_FOUND" and not missing.exists()
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    registry.session.file_reads.record(broken)
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(broken), "cell_id": "cell-0", "new_source": "x"}
    )
    assert out.error_code == "EXECUTION_ERROR" and "not a readable Jupyter notebook" in out.content
    assert broken.read_text() == "{not json"


async def test_file_backend_follows_the_protocol(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    ids = make_notebook(path)
    backend: NotebookBackend = FileNotebook(path)
    assert not backend.live and backend.path == path
    cells = await backend.list_cells()
    assert [c.id for c in cells] == ids and [c.index for c in cells] == [0, 1, 2]
    assert cells[0].outputs[0]["data"] == {"text/plain": "1"} and cells[0].execution_count == 3
    assert find_cell(cells, "cell-1").id == ids[1] and find_cell(cells, ids[2]).index == 2
    stream = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    await backend.set_outputs(ids[2], [stream], 7)
    new_id = await backend.insert_cell(ids[2], "raw", "raw text", metadata={"tags": ["t"]})
    await backend.save()
    reread = await FileNotebook(path).list_cells()
    assert reread[2].outputs == [stream] and reread[2].execution_count == 7
    assert reread[3].id == new_id and reread[3].cell_type == "raw" and reread[3].metadata == {"tags": ["t"]}


@pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")
async def test_cell_without_id_in_new_format_gets_one(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "careless.ipynb"
    make_notebook(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["cells"][1]["id"]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    registry.session.file_reads.record(path)
    out = await registry.call(
        "NotebookEdit", {"notebook_path": str(path), "cell_id": "cell-1", "new_source": "md"}
    )
    assert not out.is_error, out.content
    cells = load(path)["cells"]
    assert cells[1]["source"] == "md" and cells[1]["id"] == out.metadata["cell_id"]
    assert len({c["id"] for c in cells}) == 3
