"""A RunCell of code that blocks the kernel (print, then time.sleep) in a real kernel: with a frontend
that routes runs (the labextension's `run_started`), each line is published while the code still
runs, as a reply to the run's own id, and the goat row's timer keeps being redrawn; with an older
labextension or no frontend at all (the .ipynb on disk) the outputs still land, once, at the end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import nbformat
import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import (
    CellResult,
    KernelSession,
    Message,
    goat_kernel,
    prepare_workspace,
    replay_kernel_env,
)
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "live.ipynb"
LINES = 4
PAUSE_S = 0.5
SLOW_CELL = f"import time\nfor i in range({LINES}):\n    print(f'line {{i}}')\n    time.sleep({PAUSE_S})"
PRINTED = "".join(f"line {i}\n" for i in range(LINES))
TURNS = [
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[live]"),
    text_turn("Ran it live.", match="[live]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[old]"),
    text_turn("Ran it without routing.", match="[old]"),
    tool_turn("Read", {"file_path": "disk.ipynb"}, match="[disk]"),
    tool_turn("RunCell", {"notebook_path": "disk.ipynb", "cell_id": "cell-0"}, match="[disk]"),
    text_turn("Ran it on disk.", match="[disk]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-run-live") / "ws"
    workspace.mkdir()
    prepare_workspace(workspace)
    async with goat_kernel(workspace, server.url) as session:
        yield session


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bare_kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    """A kernel whose client has no labextension (JupyterLab closes the bridge's comm at once)."""
    workspace = tmp_path_factory.mktemp("kernel-run-bare")
    prepare_workspace(workspace)
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-run-bare", server.url)
    ) as session:
        FakeNotebookFrontend(NB, [], server_root=str(workspace), mode="close").attach(session)
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        yield session


def sent_at(msg: Message) -> float:
    date: Any = msg["header"]["date"]
    return (date if isinstance(date, datetime) else datetime.fromisoformat(str(date))).timestamp()


def routed(kernel: KernelSession, run_id: str) -> list[Message]:
    return [m for m in kernel.iopub_log if m["parent_header"].get("msg_id") == run_id]


def card_times(result: CellResult, since: float, until: float) -> set[str]:
    """The RunCell row's timer values the %%goat cell showed between two moments."""
    shown: set[str] = set()
    for msg in result.of_type("update_display_data"):
        text = str(msg["content"]["data"].get("text/plain", ""))
        if "running…" in text and since <= sent_at(msg) <= until:
            shown.add(text.split("running…", 1)[1].split()[0])
    return shown


async def run_goat(kernel: KernelSession, prompt: str, cell_id: str) -> CellResult:
    result = await kernel.execute(
        f"%%goat --mode bypassPermissions\n{prompt}", timeout=120, metadata={"cellId": cell_id}
    )
    assert result.status == "ok", result.error
    assert isinstance(result.execution_count, int)
    return result


async def test_lines_reach_the_cell_while_it_runs_and_the_timer_ticks(kernel: KernelSession) -> None:
    cells = [new_cell("code", SLOW_CELL), new_cell("code", "%%goat\n[live] run it")]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    result = await run_goat(kernel, "[live] run it", cells[1]["id"])

    [(run_id, cell_id)] = frontend.runs.items()
    assert cell_id == cells[0]["id"] and not frontend.running, "the [*] ended"
    streams = [m for m in routed(kernel, run_id) if m["header"]["msg_type"] == "stream"]
    assert "".join(m["content"]["text"] for m in streams) == PRINTED
    first, last = sent_at(streams[0]), sent_at(streams[-1])
    assert last - first >= (LINES - 1) * PAUSE_S * 0.8, "each line left while the code still ran"
    assert len(card_times(result, first, last)) >= 3, "the goat row's timer moved while the code blocked"
    ran = frontend.cell(cells[0]["id"])
    assert ran["outputs"] == [{"output_type": "stream", "name": "stdout", "text": PRINTED}]
    assert ran["execution_count"] == (result.execution_count or 0) + 1
    assert PRINTED not in result.stdout, "the cell's lines stay out of the %%goat cell"


async def test_an_older_labextension_gets_the_outputs_at_the_end(kernel: KernelSession) -> None:
    cells = [new_cell("code", SLOW_CELL), new_cell("code", "%%goat\n[old] run it")]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    frontend.routes_runs = False
    result = await run_goat(kernel, "[old] run it", cells[1]["id"])
    assert not frontend.runs
    ran = frontend.cell(cells[0]["id"])
    assert ran["outputs"] == [{"output_type": "stream", "name": "stdout", "text": PRINTED}]
    assert ran["execution_count"] == (result.execution_count or 0) + 1
    ops = [r["op"] for r in frontend.requests]
    assert "set_outputs" in ops and "run_finished" not in ops


async def test_headless_the_notebook_on_disk_holds_the_outputs(bare_kernel: KernelSession) -> None:
    kernel = bare_kernel
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SLOW_CELL), nbformat.v4.new_code_cell("%%goat\n[disk] ...")]
    nbformat.write(notebook, kernel.cwd / "disk.ipynb")
    result = await run_goat(kernel, "[disk] run the cell of disk.ipynb", notebook.cells[1].id)
    saved = nbformat.read(kernel.cwd / "disk.ipynb", as_version=4).cells[0]
    assert [dict(o) for o in saved["outputs"]] == [
        {"output_type": "stream", "name": "stdout", "text": PRINTED}
    ]
    assert saved["execution_count"] == (result.execution_count or 0) + 1
    foreign = [
        m for m in kernel.iopub_log if str(m["parent_header"].get("msg_id", "")).startswith("goat-run-")
    ]
    assert not foreign, "nothing is published for a cell no frontend shows"
    assert len(card_times(result, 0, float("inf"))) >= 3, "the row's timer moves headless too"
