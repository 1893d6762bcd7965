"""What the kernel ran, against the notebook: a cell edited after it ran and a stale cell (it reads a
variable another cell changed after it ran; running out of order alone marks nothing) are marked in Read, KernelInspect says which execution last set a name (and that its cell changed),
and the next turn's system reminder names the stale cells."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
TURNS = [
    tool_turn("Read", {"file_path": NB}, match="[stale]"),
    tool_turn("KernelInspect", {"expression": "a + d"}, match="[stale]"),
    text_turn("Seen.", match="[stale]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[rerun]"),
    tool_turn("KernelInspect", {"expression": "a"}, match="[rerun]"),
    text_turn("Re-ran.", match="[rerun]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-state")
    prepare_workspace(workspace)
    (workspace / NB).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-state", server.url)
    ) as session:
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        yield session


async def run_as_user(kernel: KernelSession, cell: dict[str, Any]) -> int:
    """Shift+Enter in JupyterLab: the execute_request carries the cell's id."""
    result = await kernel.execute(cell["source"], metadata={"cellId": cell["id"]})
    assert result.status == "ok", result.error
    assert result.execution_count is not None
    cell["execution_count"] = result.execution_count
    return result.execution_count


def request_with(server: ReplayServer, tag: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if tag in json.dumps(r["messages"])][-1]["messages"]


async def test_stale_cells_are_marked_for_the_model(kernel: KernelSession, server: ReplayServer) -> None:
    cells = [
        new_cell("code", "a = 1"),
        new_cell("code", "b = [a]"),
        new_cell("code", "c = 3"),
        new_cell("code", "d = len(b)"),
        new_cell("code", ""),
        new_cell("code", "b.append(2)"),
    ]
    ids = [cell["id"] for cell in cells]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    first = await run_as_user(kernel, cells[0])
    third = await run_as_user(kernel, cells[2])
    second = await run_as_user(kernel, cells[1])  # out of order (cell 3 ran first): by itself nothing
    fourth = await run_as_user(kernel, cells[3])
    sixth = await run_as_user(kernel, cells[5])  # changes b in place: cell 4, which reads b, is stale
    frontend.user_edit(ids[0], "a = 100")  # edited after it ran
    goat = cells[4]
    goat["source"] = "%%goat\n[stale] what is in the kernel?"
    result = await kernel.execute(
        "%%goat --new\n[stale] what is in the kernel?", timeout=120, metadata={"cellId": goat["id"]}
    )
    assert result.status == "ok", result.error

    messages = request_with(server, "[stale]")
    prompt = next(
        str(m["content"]) for m in messages if m["role"] == "user" and "[stale]" in str(m["content"])
    )
    stale_d = f"stale: reads `b`, which cell 6 (id {ids[5]}) changed after this cell ran"
    assert "<system-reminder>" in prompt and "Kernel state vs the notebook" in prompt
    assert f"cell 1 (id {ids[0]}): ran as [{first}], edited since it ran; names it set: a" in prompt
    assert f"cell 4 (id {ids[3]}): ran as [{fourth}], {stale_d}; names it set: d" in prompt
    assert "out of order" not in prompt
    for quiet in (1, 2, 5):
        assert f"cell {quiet + 1} (id {ids[quiet]}): " not in prompt, "it reads nothing changed since"

    read, inspected = [str(m["content"]) for m in messages if m["role"] == "tool"]
    assert (
        f'id="{ids[0]}" type="code" execution_count="{first}" kernel="ran as [{first}], edited since it ran"'
        in read
    )
    assert f'execution_count="{second}" kernel="ran as [{second}]"' in read
    assert f'execution_count="{third}" kernel="ran as [{third}]"' in read
    assert f'execution_count="{fourth}" kernel="ran as [{fourth}], {stale_d}"' in read
    assert f'execution_count="{sixth}" kernel="ran as [{sixth}]"' in read
    assert f'id="{goat["id"]}" type="code">' in read, "a %%goat prompt gets no kernel state"
    assert (
        f"`a` was last set by cell 1 (id {ids[0]}), execution [{first}] (run by the user), "
        "whose source has changed since" in inspected
    )
    assert (
        f"`d` was last set by cell 4 (id {ids[3]}), execution [{fourth}] (run by the user); that cell is "
        f"{stale_d}" in inspected
    )


async def test_after_run_cell_the_name_comes_from_goats_run_and_the_reminder_is_not_repeated(
    kernel: KernelSession, server: ReplayServer
) -> None:
    result = await kernel.execute(
        "%%goat\n[rerun] run the first cell again", timeout=120, metadata={"cellId": "elsewhere"}
    )
    assert result.status == "ok", result.error
    messages = request_with(server, "[rerun]")
    *_, inspected = [str(m["content"]) for m in messages if m["role"] == "tool"]
    assert "`a` was last set by cell 1" in inspected and "(run by goat's RunCell)" in inspected
    assert "changed since" not in inspected
    after = await kernel.execute("a")
    assert after.text().strip().startswith("100")
    prompt = [str(m["content"]) for m in messages if m["role"] == "user" and "[rerun]" in str(m["content"])][
        -1
    ]
    assert "edited since it ran" not in prompt, "cell 1 ran again: no longer edited since"
