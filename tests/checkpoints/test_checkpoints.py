"""Checkpoints: what a run changed (files, live cells) is reverted; later changes and shell effects are
reported, not clobbered. In-process through the real executor, then in a kernel with the button."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import pytest_asyncio

from goat_jupyter.agent.session import Session
from goat_jupyter.checkpoints.store import Checkpoints, RunCheckpoint
from goat_jupyter.live.comm_bridge import CommBridge
from goat_jupyter.live.select import NotebookService
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor, ToolCall
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, loopback_opener, new_cell


class Rig:
    """An executor with the checkpoints (and optionally a live notebook) attached, as in a kernel."""

    def __init__(self, workspace: Path, frontend: FakeNotebookFrontend | None = None) -> None:
        self.session = Session(workspace=workspace, persist=False)
        self.checkpoints = Checkpoints()
        services = Services(checkpoints=self.checkpoints)
        if frontend is not None:
            services.bridge = NotebookService(
                lambda: CommBridge(loopback_opener(frontend)),
                notify=print,
                kernel_dir=(Path(frontend.server_root) / frontend.own_path).parent,
            )
        self.service: NotebookService | None = services.bridge
        self.executor = Executor(default_registry(session=self.session), self.session, services=services)

    async def run(self, *calls: tuple[str, dict[str, Any]]) -> RunCheckpoint:
        run = self.checkpoints.begin("test run")
        for number, (name, args) in enumerate(calls):
            [out] = await self.executor.run_calls([ToolCall(f"c{number}", name, args)])
            assert not out.is_error, out.content
        self.checkpoints.end()
        return run


async def test_revert_restores_written_edited_deleted_and_moved_files(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (tmp_path / "keep.txt").write_text("original\r\nline two\r\n")
    (tmp_path / "old.csv").write_text("a,b\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(b"\x00\x01")
    os.chmod(tmp_path / "keep.txt", 0o640)
    run = await rig.run(
        ("Read", {"file_path": "keep.txt"}),
        ("Edit", {"file_path": "keep.txt", "old_string": "original", "new_string": "edited"}),
        ("Write", {"file_path": "new/made.txt", "content": "created\n"}),
        ("Move", {"from": "old.csv", "to": "renamed.csv"}),
        ("Delete", {"path": "data", "recursive": True}),
        ("Bash", {"command": "echo side effect > bash.txt"}),
    )
    assert run.summary() == "This run changed 5 files."
    report = await rig.checkpoints.revert(run, None)
    assert (tmp_path / "keep.txt").read_bytes() == b"original\r\nline two\r\n"
    assert (tmp_path / "keep.txt").stat().st_mode & 0o777 == 0o640
    assert not (tmp_path / "new" / "made.txt").exists()
    assert (tmp_path / "old.csv").read_text() == "a,b\n" and not (tmp_path / "renamed.csv").exists()
    assert (tmp_path / "data" / "x.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "bash.txt").exists(), "shell effects stay"
    text = report.text()
    assert "restored" in text and "moved" in text and "removed" in text
    assert "Could not be undone:" in text and "Bash" in text and "shell commands" in text
    assert rig.checkpoints.last_revertible() is None


async def test_changes_made_after_the_run_are_left_alone_and_reported(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    run = await rig.run(
        ("Write", {"file_path": "a.txt", "content": "goat wrote a\n"}),
        ("Write", {"file_path": "b.txt", "content": "goat wrote b\n"}),
    )
    (tmp_path / "b.txt").write_text("the user changed b\n")
    report = await rig.checkpoints.revert(run, None)
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "the user changed b\n"
    assert any("b.txt: changed after the run, left as is" in line for line in report.skipped)


async def test_failed_and_read_only_calls_record_nothing(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    run = rig.checkpoints.begin("nothing")
    await rig.executor.run_calls(
        [
            ToolCall("1", "Write", {"file_path": str(tmp_path), "content": "x"}),  # a directory: error
            ToolCall("2", "Glob", {"pattern": "*"}),
        ]
    )
    rig.checkpoints.end()
    assert not run.changed and not run.not_undone


def write_saved_notebook(path: Path) -> None:
    """JupyterLab's notebooks exist on disk too; the open one may differ (unsaved changes)."""
    v4: Any = nbformat.v4  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("saved")]), path)  # pyright: ignore[reportUnknownMemberType]


def live_frontend(workspace: Path) -> FakeNotebookFrontend:
    write_saved_notebook(workspace / "nb.ipynb")
    cells = [
        new_cell("code", "a = 1", execution_count=1),
        new_cell("markdown", "# Title"),
        new_cell("code", "b = 2"),
    ]
    cells[0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "kept output\n"}]
    return FakeNotebookFrontend("nb.ipynb", cells, server_root=str(workspace))


async def test_revert_restores_live_cells_inserted_replaced_and_deleted(tmp_path: Path) -> None:
    frontend = live_frontend(tmp_path)
    original = json.loads(json.dumps(frontend.cells()))
    rig = Rig(tmp_path, frontend)
    first, title, last = (c["id"] for c in frontend.cells())
    nb = str(tmp_path / "nb.ipynb")
    run = await rig.run(
        ("Read", {"file_path": nb}),
        ("NotebookEdit", {"notebook_path": nb, "cell_id": first, "new_source": "a = 100"}),
        ("NotebookEdit", {"notebook_path": nb, "cell_id": title, "new_source": "", "edit_mode": "delete"}),
        (
            "NotebookEdit",
            {
                "notebook_path": nb,
                "cell_id": last,
                "new_source": "c = 3",
                "cell_type": "code",
                "edit_mode": "insert",
            },
        ),
        ("NotebookEdit", {"notebook_path": nb, "cell_id": last, "new_source": "b = 20"}),
    )
    assert [c["source"] for c in frontend.cells()] == ["a = 100", "b = 20", "c = 3"]
    assert run.summary() == "This run changed 4 cells."
    assert rig.service is not None
    report = await rig.checkpoints.revert(run, rig.service.fork())
    restored = frontend.cells()
    assert [(c["cell_type"], c["source"]) for c in restored] == [
        (c["cell_type"], c["source"]) for c in original
    ]
    assert restored[0] == original[0], "source, metadata (no goat stamp) and outputs are back"
    assert restored[2]["metadata"] == {} and restored[1]["id"] != title  # the deleted cell came back anew
    assert any(f"restored deleted cell {title}" in line for line in report.done)


async def test_revert_keeps_a_cell_the_user_edited_after_the_run(tmp_path: Path) -> None:
    frontend = live_frontend(tmp_path)
    rig = Rig(tmp_path, frontend)
    nb = str(tmp_path / "nb.ipynb")
    first = frontend.cells()[0]["id"]
    run = await rig.run(
        ("Read", {"file_path": nb}),
        ("NotebookEdit", {"notebook_path": nb, "cell_id": first, "new_source": "a = 'goat'"}),
        (
            "NotebookEdit",
            {"notebook_path": nb, "new_source": "# new", "cell_type": "markdown", "edit_mode": "insert"},
        ),
    )
    frontend.user_edit(first, "a = 'the user, later'")
    assert rig.service is not None
    report = await rig.checkpoints.revert(run, rig.service.fork())
    assert [c["source"] for c in frontend.cells()] == ["a = 'the user, later'", "# Title", "b = 2"]
    assert any("edited after the run, left as is" in line for line in report.skipped)


async def test_revert_of_a_notebook_edited_on_disk_restores_the_file(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    path = tmp_path / "disk.ipynb"
    v4: Any = nbformat.v4  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("x = 1")]), path)  # pyright: ignore[reportUnknownMemberType]
    before = path.read_bytes()
    run = await rig.run(
        ("Read", {"file_path": str(path)}),
        (
            "NotebookEdit",
            {
                "notebook_path": str(path),
                "new_source": "# hi",
                "cell_type": "markdown",
                "edit_mode": "insert",
            },
        ),
    )
    assert path.read_bytes() != before
    await rig.checkpoints.revert(run, None)
    assert path.read_bytes() == before


# In a kernel: the button after the cell, and %goat undo.

TURNS = [
    tool_turn("Read", {"file_path": "nb.ipynb"}, match="[button]"),
    tool_turn(
        "NotebookEdit",
        {
            "notebook_path": "nb.ipynb",
            "new_source": "print('goat')",
            "cell_type": "code",
            "edit_mode": "insert",
        },
        match="[button]",
    ),
    tool_turn(
        "NotebookEdit",
        {"notebook_path": "nb.ipynb", "cell_id": "cell-0", "new_source": "a = 'changed'"},
        match="[button]",
    ),
    tool_turn("Write", {"file_path": "notes.txt", "content": "from goat\n"}, match="[button]"),
    text_turn("Changed things.", match="[button]"),
    tool_turn("Read", {"file_path": "nb.ipynb"}, match="[undo]"),
    tool_turn(
        "NotebookEdit",
        {"notebook_path": "nb.ipynb", "cell_id": "cell-0", "new_source": "", "edit_mode": "delete"},
        match="[undo]",
    ),
    tool_turn("Bash", {"command": "echo hi > shell.txt"}, match="[undo]"),
    text_turn("Deleted it.", match="[undo]"),
]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def kernel_rig(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[KernelSession, Path]]:
    workspace = tmp_path_factory.mktemp("revert")
    prepare_workspace(workspace)
    with ReplayServer(TURNS) as server:
        async with KernelSession(
            workspace, replay_kernel_env(workspace.parent / "home-revert", server.url)
        ) as session:
            loaded = await session.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.error
            yield session, workspace


def widget_says(kernel: KernelSession, text: str) -> bool:
    return any(
        text in json.dumps(m["content"]["data"])
        for m in kernel.comm_log
        if m["header"]["msg_type"] == "comm_msg"
    )


@pytest.mark.timeout(240)
@pytest.mark.asyncio(loop_scope="module")
async def test_revert_button_restores_cells_and_files(kernel_rig: tuple[KernelSession, Path]) -> None:
    kernel, workspace = kernel_rig
    write_saved_notebook(workspace / "nb.ipynb")
    cells = [new_cell("code", "a = 1"), new_cell("code", "%%goat\n[button]")]
    frontend = FakeNotebookFrontend("nb.ipynb", cells, server_root=str(workspace)).attach(kernel)
    original = [c["source"] for c in frontend.cells()]
    result = await kernel.execute(
        "%%goat --new\n[button] change things", timeout=120, metadata={"cellId": cells[1]["id"]}
    )
    assert result.status == "ok", result.error
    assert [c["source"] for c in frontend.cells()] == ["a = 'changed'", "%%goat\n[button]", "print('goat')"]
    assert (workspace / "notes.txt").exists()
    button = await kernel.wait_widget("ButtonModel", description="Revert this run")
    kernel.click(button)
    await kernel.pump(lambda: widget_says(kernel, "Reverted %%goat run"), timeout=30)
    assert [c["source"] for c in frontend.cells()] == original
    assert not (workspace / "notes.txt").exists()
    assert widget_says(kernel, "Reverted")


@pytest.mark.timeout(240)
@pytest.mark.asyncio(loop_scope="module")
async def test_goat_undo_reverts_the_last_run_and_names_what_it_could_not(
    kernel_rig: tuple[KernelSession, Path],
) -> None:
    kernel, workspace = kernel_rig
    write_saved_notebook(workspace / "nb.ipynb")
    cells = [new_cell("code", "keep_me = 1"), new_cell("code", "%%goat\n[undo]")]
    frontend = FakeNotebookFrontend("nb.ipynb", cells, server_root=str(workspace)).attach(kernel)
    result = await kernel.execute(
        "%%goat --new\n[undo] delete the first cell", timeout=120, metadata={"cellId": cells[1]["id"]}
    )
    assert result.status == "ok", result.error
    assert [c["source"] for c in frontend.cells()] == ["%%goat\n[undo]"]
    undo = await kernel.execute("%goat undo", timeout=60, metadata={"cellId": "the-undo-cell"})
    assert undo.status == "ok", undo.error
    assert [c["source"] for c in frontend.cells()] == ["keep_me = 1", "%%goat\n[undo]"]
    # The record is a display (HTML + full text) so the saved notebook keeps it like other records.
    record = undo.text("text/plain")
    assert "restored deleted cell" in record and "Could not be undone:" in record
    assert "echo hi > shell.txt" in record and (workspace / "shell.txt").exists()
    # The Bash command's effects stay: the headline says the revert was partial, and why.
    assert "Partly reverted %%goat run" in undo.text("text/html")
    assert "by the user; 1 could not be undone" in undo.text("text/html")
    again = await kernel.execute("%goat undo", timeout=60)
    assert "Nothing to undo" in again.stdout
