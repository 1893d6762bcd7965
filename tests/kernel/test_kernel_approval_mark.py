"""Issue 35, point 2 (default mode): a NotebookEdit approval is shown at its cell. In a real kernel with
the fake frontend, each approval asks the notebook to reveal the cell with what would change there (the
diff of an edit, the cell a delete removes, the new source where an insert goes), a tab that reloads
meanwhile gets the same mark with the open prompt, and the mark is released when the user answers
(Allow or Deny) or stops the run. Deny leaves the cell as it was; Allow applies the change."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel.test_kernel_reload import ReloadedTab
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env, wait_for
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
TAG = "[marks]"
STOP = "[marks-stop]"
EDIT = {"notebook_path": NB, "cell_id": "cell-1", "new_source": "b = 20\nprint(b)"}
INSERT = {"notebook_path": NB, "cell_id": "cell-0", "new_source": "inserted = True", "cell_type": "code"}
# After the insert below cell 1, cell 4 is "c = 3".
DELETE = {"notebook_path": NB, "cell_id": "cell-3", "new_source": "", "edit_mode": "delete"}
BELOW = {"notebook_path": NB, "new_source": "# notes", "cell_type": "markdown", "edit_mode": "insert"}
TURNS = [
    tool_turn("Read", {"file_path": NB}, match=TAG),
    tool_turn("NotebookEdit", EDIT, match=TAG),
    tool_turn("NotebookEdit", {**INSERT, "edit_mode": "insert"}, match=TAG),
    tool_turn("NotebookEdit", DELETE, match=TAG),
    tool_turn("NotebookEdit", BELOW, match=TAG),
    text_turn("Done with the cells.", match=TAG),
    tool_turn("Read", {"file_path": NB}, match=STOP),
    tool_turn("NotebookEdit", EDIT, match=STOP),
]


class MarkingFrontend(FakeNotebookFrontend):
    """The fake frontend, also keeping what `reveal_cell` shows until `release_cell`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marked: dict[str, dict[str, Any]] = {}
        self.released: list[str] = []

    def _op_reveal_cell(self, request: dict[str, Any]) -> dict[str, Any]:
        self.marked[request["cell_id"]] = request
        return {}

    def _op_release_cell(self, request: dict[str, Any]) -> dict[str, Any]:
        self.marked.pop(request["cell_id"], None)
        self.released.append(request["cell_id"])
        return {}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def notebook(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[KernelSession, MarkingFrontend]]:
    workspace = tmp_path_factory.mktemp("approval-marks")
    prepare_workspace(workspace)
    cells = [
        new_cell("code", "a = 1"),
        new_cell("code", "b = 2"),
        new_cell("code", "c = 3"),
        new_cell("code", f"%%goat\n{TAG} ..."),
    ]
    write_notebook(workspace / NB, cells)
    env = replay_kernel_env(workspace.parent / "home-marks", server.url, mode="default")
    async with KernelSession(workspace, env) as kernel:
        assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
        frontend = MarkingFrontend(NB, cells, server_root=str(kernel.cwd))
        frontend.attach(kernel)
        yield kernel, frontend


def write_notebook(path: Path, cells: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


async def next_mark(kernel: KernelSession, frontend: MarkingFrontend) -> dict[str, Any]:
    """The mark of the approval now asked (answered prompts close their buttons), once it is drawn."""
    await wait_for(lambda: bool(kernel.widgets("ButtonModel", description="Deny")), 60)
    await wait_for(lambda: len(frontend.marked) == 1, 10)
    return next(iter(frontend.marked.values()))


async def answer(kernel: KernelSession, frontend: MarkingFrontend, choice: str) -> None:
    released = len(frontend.released)
    kernel.click(kernel.widgets("ButtonModel", description=choice)[-1])
    await wait_for(lambda: len(frontend.released) > released and not frontend.marked, 30)


async def live_marks(kernel: KernelSession) -> list[Any]:
    tab = ReloadedTab(kernel)
    try:
        [run] = (await tab.ask_live())["runs"]
        return [prompt["mark"] for prompt in run["prompts"]]
    finally:
        tab.close()


async def test_each_notebook_edit_approval_is_shown_at_its_cell_until_answered(
    notebook: tuple[KernelSession, MarkingFrontend],
) -> None:
    kernel, frontend = notebook
    ids = [cell["id"] for cell in frontend.cells()]
    running = asyncio.ensure_future(
        kernel.execute(f"%%goat --new\n{TAG} tidy up", timeout=180, metadata={"cellId": ids[3]})
    )
    try:
        edit = await next_mark(kernel, frontend)
        assert edit["cell_id"] == ids[1] and edit["lock"] is True and "path" not in edit
        assert edit["mark"]["kind"] == "edit"
        assert "-b = 2" in edit["mark"]["diff"] and "+b = 20" in edit["mark"]["diff"]
        assert "+print(b)" in edit["mark"]["diff"]
        [again] = await live_marks(kernel)
        assert again == {"cell_id": ids[1], "path": None, "lock": True, "mark": edit["mark"]}, (
            "a reload draws it"
        )
        await answer(kernel, frontend, "Deny")
        assert frontend.cell(ids[1])["source"] == "b = 2", "Deny leaves the cell as it was"

        insert = await next_mark(kernel, frontend)
        assert insert["cell_id"] == ids[0] and insert["lock"] is False
        assert insert["mark"] == {
            "kind": "insert",
            "diff": "",
            "source": "inserted = True",
            "cell_type": "code",
        }
        await answer(kernel, frontend, "Allow once")
        await wait_for(lambda: any(c["source"] == "inserted = True" for c in frontend.cells()), 30)
        assert [c["source"] for c in frontend.cells()].index("inserted = True") == 1

        delete = await next_mark(kernel, frontend)
        assert delete["cell_id"] == ids[2] and delete["mark"]["kind"] == "delete" and delete["lock"] is True
        assert "-c = 3" in delete["mark"]["diff"]
        await answer(kernel, frontend, "Allow once")
        await wait_for(lambda: ids[2] not in [c["id"] for c in frontend.cells()], 30)

        below = await next_mark(kernel, frontend)
        # An insert without a cell id goes below the running %%goat cell: shown there, not at the top.
        assert below["cell_id"] == ids[3] and below["mark"]["kind"] == "insert"
        assert below["mark"]["cell_type"] == "markdown" and below["mark"]["source"] == "# notes"
        await answer(kernel, frontend, "Deny")
        result = await asyncio.wait_for(running, 120)
    finally:
        if not running.done():
            await kernel.interrupt()
            await asyncio.wait_for(running, 30)
    assert result.status == "ok", result.error
    assert "Done with the cells." in result.text("text/plain") + result.text("text/markdown")
    assert "# notes" not in [c["source"] for c in frontend.cells()]
    assert frontend.marked == {}


async def test_stopping_the_run_releases_the_mark(notebook: tuple[KernelSession, MarkingFrontend]) -> None:
    kernel, frontend = notebook
    ids = [cell["id"] for cell in frontend.cells()]
    before = frontend.cell(ids[1])["source"]
    released = len(frontend.released)
    running = asyncio.ensure_future(
        kernel.execute(f"%%goat --new\n{STOP} again", timeout=180, metadata={"cellId": ids[-1]})
    )
    await wait_for(lambda: len(frontend.marked) == 1, 60)
    await kernel.interrupt()
    await asyncio.wait_for(running, 30)
    await wait_for(lambda: len(frontend.released) > released, 10)
    assert frontend.marked == {} and frontend.released[-1] == ids[1]
    assert frontend.cell(ids[1])["source"] == before
    tab = ReloadedTab(kernel)
    try:
        assert await tab.ask_live() == {"runs": []}
    finally:
        tab.close()
