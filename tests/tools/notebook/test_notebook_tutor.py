"""Tutor style: goat never writes into a cell the student wrote (in every permission mode), cells
goat wrote stay editable until the student edits them, and each cell goat writes carries provenance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from goat_jupyter.live import CellInfo
from goat_jupyter.live.select import NotebookService
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.notebook.notebook_provenance import source_hash, written_by_goat
from goat_jupyter.tools.runner import Executor

STUDENT = "def mean(xs):\n    # TODO(you): return the mean\n    pass"


class AllowingApprover:
    """Says yes to everything: only the tutor rule can stop a call."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("allow_once")


class Classroom:
    """A notebook with a student's cells, and the executor goat's model drives, in tutor style."""

    def __init__(self, root: Path, mode: PermissionMode = "default") -> None:
        self.path = root / "lesson.ipynb"
        nb = new_notebook()
        nb.cells = [new_markdown_cell("# Lesson"), new_code_cell(STUDENT)]
        self.path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
        self.ids = [str(cell.id) for cell in nb.cells]
        registry = default_registry(cwd=root)
        self.session = registry.session
        self.session.settings.permission_mode = mode
        self.session.settings.output_style = "tutor"
        self.service = NotebookService(notify=lambda _text: None, kernel_dir=root)
        self.service.begin_run(running_cell_id="goat-cell-7", probe=False, prompt="\n  Teach me means\nmore")
        self.approver = AllowingApprover()
        policy = RulePolicy(self.approver)
        self.executor = Executor(
            registry, self.session, policy=policy, services=Services(bridge=self.service)
        )
        self._n = 0

    async def call(self, tool: str, args: dict[str, Any]) -> ToolOutput:
        self._n += 1
        if tool == "NotebookEdit":
            args = {"notebook_path": str(self.path), "new_source": "", **args}
            await self.call("Read", {"file_path": str(self.path)})
        return await self.executor.run_one(ToolCall(f"c{self._n}", tool, args))

    def cells(self) -> list[Any]:
        return nbformat.read(self.path, as_version=4).cells  # pyright: ignore[reportUnknownMemberType]


def assert_refused(out: ToolOutput) -> None:
    assert out.is_error and out.error_code == "PERMISSION_DENIED", out.content
    assert out.declined, "shown as information in the cell, not as a red failure"
    assert "in tutor style goat does not write into the student's cells" in out.content
    assert "insert a new cell below" in out.content


MODES: list[PermissionMode] = ["default", "acceptEdits", "bypassPermissions", "dontAsk"]


@pytest.mark.parametrize("mode", MODES)
async def test_replace_or_delete_of_a_student_cell_is_refused_in_every_mode(
    tmp_path: Path, mode: PermissionMode
) -> None:
    room = Classroom(tmp_path, mode)
    before = room.path.read_bytes()
    for cell_id in (room.ids[1], "cell-1", room.ids[0], "cell-0"):
        assert_refused(await room.call("NotebookEdit", {"cell_id": cell_id, "new_source": "return 1"}))
        assert_refused(await room.call("NotebookEdit", {"cell_id": cell_id, "edit_mode": "delete"}))
        changed_type = {"cell_id": cell_id, "new_source": "x", "cell_type": "markdown"}
        assert_refused(await room.call("NotebookEdit", changed_type))
    assert room.path.read_bytes() == before
    assert not [r for r in room.approver.requests if r.tool_name == "NotebookEdit"]  # refused before asking


async def test_no_file_tool_overwrites_or_removes_the_notebook(tmp_path: Path) -> None:
    room = Classroom(tmp_path, "bypassPermissions")
    before = room.path.read_bytes()
    (tmp_path / "notes.txt").symlink_to(room.path)  # another name for the same notebook
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Lesson2.IPYNB").write_text("{}")
    (tmp_path / "other.ipynb").write_text("{}")
    for spelling in (str(room.path), "lesson.ipynb", "./sub/../lesson.ipynb", "notes.txt"):
        await room.call("Read", {"file_path": spelling})
        assert_file_refused(await room.call("Write", {"file_path": spelling, "content": "{}"}))
        edit = {"file_path": spelling, "old_string": "pass", "new_string": "return 1"}
        assert (await room.call("Edit", edit)).is_error
        assert_file_refused(await room.call("Delete", {"path": spelling}))
        assert_file_refused(await room.call("Move", {"from": spelling, "to": "moved.ipynb"}))
        move_over = {"from": "other.ipynb", "to": spelling, "overwrite": True}
        assert_file_refused(await room.call("Move", move_over))
    assert_file_refused(await room.call("Delete", {"path": "sub", "recursive": True}))
    assert_file_refused(await room.call("Write", {"file_path": "sub/Lesson2.IPYNB", "content": "{}"}))
    assert room.path.read_bytes() == before and (tmp_path / "sub" / "Lesson2.IPYNB").exists()
    assert (tmp_path / "other.ipynb").exists()
    fresh = await room.call("Write", {"file_path": "new.ipynb", "content": "{}"})  # a new file is fine
    assert not fresh.is_error, fresh.content
    room.session.settings.output_style = "default"
    assert not (await room.call("Delete", {"path": "sub", "recursive": True})).is_error


def assert_file_refused(out: ToolOutput) -> None:
    assert out.is_error and out.error_code == "PERMISSION_DENIED" and out.declined, out.content
    assert "would overwrite or remove the student's notebook cells" in out.content


async def test_cells_goat_inserted_stay_editable_until_the_student_edits_them(tmp_path: Path) -> None:
    room = Classroom(tmp_path, "acceptEdits")
    hint = "# Hint: sum(xs) / len(xs) is the mean.\n# TODO(you): try it"
    out = await room.call(
        "NotebookEdit",
        {"cell_id": room.ids[1], "edit_mode": "insert", "new_source": hint, "cell_type": "code"},
    )
    assert not out.is_error, out.content
    new_id = out.metadata["cell_id"]
    second = await room.call("NotebookEdit", {"cell_id": new_id, "new_source": hint + "\n# step 2"})
    assert not second.is_error, second.content
    assert room.cells()[2].source == hint + "\n# step 2"
    nb = nbformat.read(room.path, as_version=4)  # pyright: ignore[reportUnknownMemberType]
    nb.cells[2].source = "print(sum([1, 2]) / 2)"  # the student works in goat's exercise cell
    nbformat.write(nb, room.path)  # pyright: ignore[reportUnknownMemberType]
    assert_refused(await room.call("NotebookEdit", {"cell_id": new_id, "new_source": "solution"}))
    assert_refused(await room.call("NotebookEdit", {"cell_id": new_id, "edit_mode": "delete"}))
    assert room.cells()[2].source == "print(sum([1, 2]) / 2)"


async def test_the_style_is_read_at_call_time(tmp_path: Path) -> None:
    room = Classroom(tmp_path, "bypassPermissions")
    room.session.settings.output_style = "default"
    out = await room.call("NotebookEdit", {"cell_id": room.ids[1], "new_source": "return 1"})
    assert not out.is_error, out.content
    nb = nbformat.read(room.path, as_version=4)  # pyright: ignore[reportUnknownMemberType]
    nb.cells[1].source = STUDENT
    nbformat.write(nb, room.path)  # pyright: ignore[reportUnknownMemberType]
    room.session.settings.output_style = "tutor"  # switched (or forced) between two calls
    assert_refused(await room.call("NotebookEdit", {"cell_id": room.ids[1], "new_source": "return 2"}))
    room.session.settings.output_style = "explain"
    assert not (await room.call("NotebookEdit", {"cell_id": room.ids[1], "new_source": "return 3"})).is_error


@pytest.mark.parametrize("stamp", [{}, "goat", ["session"], {"model": "m", "source_hash": "0" * 16}])
async def test_a_missing_empty_or_stale_stamp_is_the_students(tmp_path: Path, stamp: object) -> None:
    room = Classroom(tmp_path, "bypassPermissions")
    nb = nbformat.read(room.path, as_version=4)  # pyright: ignore[reportUnknownMemberType]
    nb.cells[1].metadata["goat"] = stamp
    nbformat.write(nb, room.path)  # pyright: ignore[reportUnknownMemberType]
    assert_refused(await room.call("NotebookEdit", {"cell_id": room.ids[1], "new_source": "return 1"}))


async def test_goat_stamps_its_cells_with_where_they_came_from(tmp_path: Path) -> None:
    room = Classroom(tmp_path)
    room.session.settings.output_style = "default"
    source = "xs = [1, 2, 3]\n"
    out = await room.call("NotebookEdit", {"cell_id": room.ids[1], "new_source": source})
    assert not out.is_error, out.content
    stamp = room.cells()[1].metadata["goat"]
    assert stamp["cell"] == "goat-cell-7" and stamp["prompt"] == "Teach me means"
    assert stamp["source_hash"] == source_hash(source) and stamp["model"] == room.session.settings.model
    room.service.begin_run(running_cell_id=None, probe=False, prompt="x" * 500)
    out = await room.call("NotebookEdit", {"edit_mode": "insert", "new_source": "", "cell_type": "code"})
    stamp = room.cells()[0].metadata["goat"]
    assert "cell" not in stamp and len(stamp["prompt"]) == 120 and stamp["prompt"].endswith("…")


def test_source_hash_is_sha256_of_utf8_in_16_hex_digits() -> None:
    assert source_hash("") == "e3b0c44298fc1c14"
    assert source_hash("é") == "4a99557e4033c353"  # the labextension hashes the same bytes


@given(st.text(), st.text())
def test_only_the_exact_source_goat_wrote_counts_as_goats(wrote: str, now: str) -> None:
    stamp = {"goat": {"model": "m", "source_hash": source_hash(wrote)}}
    cell = CellInfo(id="a", index=0, cell_type="code", source=now, metadata=stamp)
    assert written_by_goat(cell) == (wrote == now)
