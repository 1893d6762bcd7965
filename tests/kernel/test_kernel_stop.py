"""Stop during RunCell / KernelInspect of code that blocks the kernel thread: the user code is
interrupted (not left to finish on its own), the cell keeps its partial output, the %%goat run ends
as one interrupt line and the kernel runs the next cell."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import assert_history_valid, text_turn, tool_turn
from tests.kernel_harness import CellResult, KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
HANG_GUARD_S = 20  # the real figure (well under 2 s) is measured by benchmarks/bench_interrupt.py
INTERRUPT_LINE = "⊘ Interrupted by the user after 1 turn."
BLOCKING_CELL = "import time\nprint('before the loop')\nopen('started.txt', 'w').write('1')\nwhile True:\n    time.sleep(0.1)"
SLOW_EXPRESSION = "(open('inspecting.txt', 'w').write('1'), __import__('time').sleep(600))"
TURNS = [
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[block]"),
    text_turn("Back after the stop.", match="[after-block]"),
    tool_turn("KernelInspect", {"expression": SLOW_EXPRESSION}, match="[inspect]"),
    text_turn("Back after the inspect stop.", match="[after-inspect]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[awaiting]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-stop")
    prepare_workspace(workspace)
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-stop", server.url)
    ) as session:
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        yield session


async def stop_once_started(
    kernel: KernelSession, cell: asyncio.Future[CellResult], marker: Path
) -> CellResult:
    await asyncio.wait_for(_until(marker.exists), 120)
    await asyncio.sleep(0.3)  # well inside the blocking code
    stopped_at = time.perf_counter()
    await kernel.interrupt()
    result = await asyncio.wait_for(cell, HANG_GUARD_S)
    print(f"stop to cell end: {(time.perf_counter() - stopped_at) * 1000:.0f} ms")
    return result


async def _until(predicate: object) -> None:
    while not predicate():  # type: ignore[operator]
        await asyncio.sleep(0.02)


def assert_one_interrupt_line(result: CellResult) -> None:
    assert result.status == "error" and result.error is not None
    assert result.error["content"]["traceback"] == [f"\x1b[33m{INTERRUPT_LINE}\x1b[0m"]
    shown = str(result.of_type("stream", "display_data", "update_display_data", "error"))
    assert "CancelledError" not in shown and "Traceback" not in shown


def tool_results(server: ReplayServer, match: str) -> list[str]:
    request = next(r for r in reversed(server.requests) if match in json.dumps(r["messages"]))
    assert_history_valid([m for m in request["messages"] if m["role"] != "system"])
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_stop_interrupts_a_blocking_cell_run_by_run_cell(
    kernel: KernelSession, server: ReplayServer
) -> None:
    cells = [new_cell("code", BLOCKING_CELL), new_cell("code", "%%goat\n[block] run it")]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    cell = asyncio.ensure_future(
        kernel.execute("%%goat --new\n[block] run it", timeout=300, metadata={"cellId": cells[1]["id"]})
    )
    result = await stop_once_started(kernel, cell, kernel.cwd / "started.txt")
    assert_one_interrupt_line(result)
    ran = frontend.cells()[0]
    assert ran["outputs"][0] == {"output_type": "stream", "name": "stdout", "text": "before the loop\n"}
    assert ran["outputs"][-1]["output_type"] == "error" and ran["outputs"][-1]["ename"] == "KeyboardInterrupt"
    # The traceback ends in the user's loop, as a plain cell's does: not in goat's SIGINT handler.
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(ran["outputs"][-1]["traceback"]))
    assert "time.sleep" in traceback and "on_sigint" not in traceback, traceback
    assert "goat_jupyter" not in traceback and "capture.py" not in traceback, traceback
    assert isinstance(ran["execution_count"], int)
    assert len(frontend.runs) == 1 and not frontend.running, "the cell's [*] ended with the Stop"

    following = await kernel.execute("print('next cell runs')", timeout=30)
    assert following.status == "ok" and following.stdout == "next cell runs\n"
    after = await kernel.execute("%%goat\n[after-block] still there?", timeout=120)
    assert after.status == "ok", after.error
    [run_cell] = tool_results(server, "[after-block]")
    assert "interrupted by the user" in run_cell and "before the loop" in run_cell


async def test_stop_interrupts_a_slow_kernel_inspect(kernel: KernelSession, server: ReplayServer) -> None:
    cell = asyncio.ensure_future(kernel.execute("%%goat\n[inspect] look", timeout=300))
    result = await stop_once_started(kernel, cell, kernel.cwd / "inspecting.txt")
    assert_one_interrupt_line(result)
    after = await kernel.execute("%%goat\n[after-inspect] still there?", timeout=120)
    assert after.status == "ok", after.error
    inspected = tool_results(server, "[after-inspect]")[-1]
    assert "interrupted by the user" in inspected


async def test_stop_still_cancels_a_cell_that_awaits(kernel: KernelSession, server: ReplayServer) -> None:
    """The path that worked before keeps working: an awaiting cell is cancelled by ipykernel."""
    (kernel.cwd / "started.txt").unlink(missing_ok=True)
    source = "import asyncio\nopen('started.txt', 'w').write('1')\nawait asyncio.sleep(600)"
    cells = [new_cell("code", source), new_cell("code", "%%goat\n[awaiting] run it")]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    cell = asyncio.ensure_future(
        kernel.execute("%%goat --new\n[awaiting] run it", timeout=300, metadata={"cellId": cells[1]["id"]})
    )
    result = await stop_once_started(kernel, cell, kernel.cwd / "started.txt")
    assert_one_interrupt_line(result)
    assert isinstance(frontend.cells()[0]["execution_count"], int), "the partial run is recorded in the cell"
    following = await kernel.execute("print('next')", timeout=30)
    assert following.stdout == "next\n"
