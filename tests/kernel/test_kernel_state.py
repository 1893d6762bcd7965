"""What the kernel ran, against the notebook: a cell edited after it ran and a cell run out of order
are marked in Read, KernelInspect says which execution last set a name (and that its cell changed),
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
    tool_turn("KernelInspect", {"expression": "a + b"}, match="[stale]"),
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
        new_cell("code", "b = 2"),
        new_cell("code", "c = 3"),
        new_cell("code", ""),
    ]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    first = await run_as_user(kernel, cells[0])
    third = await run_as_user(kernel, cells[2])
    second = await run_as_user(kernel, cells[1])  # out of order: the cell below it ran first
    frontend.user_edit(cells[0]["id"], "a = 100")  # edited after it ran
    goat = cells[3]
    goat["source"] = "%%goat\n[stale] what is in the kernel?"
    result = await kernel.execute(
        "%%goat --new\n[stale] what is in the kernel?", timeout=120, metadata={"cellId": goat["id"]}
    )
    assert result.status == "ok", result.error

    messages = request_with(server, "[stale]")
    prompt = next(
        str(m["content"]) for m in messages if m["role"] == "user" and "[stale]" in str(m["content"])
    )
    assert "<system-reminder>" in prompt and "Kernel state vs the notebook" in prompt
    assert f"cell 1 (id {cells[0]['id']}): ran as [{first}], edited since it ran; names it set: a" in prompt
    assert (
        f"cell 2 (id {cells[1]['id']}): ran as [{second}], out of order: cell 3 (id {cells[2]['id']})"
        in prompt
    )
    assert f"cell 3 (id {cells[2]['id']}): " not in prompt, "the cell run in order is not stale"

    read, inspected = [str(m["content"]) for m in messages if m["role"] == "tool"]
    assert (
        f'id="{cells[0]["id"]}" type="code" execution_count="{first}" kernel="ran as [{first}], edited since it ran"'
        in read
    )
    assert (
        f'kernel="ran as [{second}], out of order: cell 3 (id {cells[2]["id"]}) below it ran before it"'
        in read
    )
    assert f'execution_count="{third}" kernel="ran as [{third}]"' in read
    assert f'id="{goat["id"]}" type="code">' in read, "a %%goat prompt gets no kernel state"
    assert (
        f"`a` was last set by cell 1 (id {cells[0]['id']}), execution [{first}] (run by the user), "
        "whose source has changed since" in inspected
    )
    assert (
        f"`b` was last set by cell 2 (id {cells[1]['id']}), execution [{second}] (run by the user); that cell "
        f"ran out of order (cell 3 (id {cells[2]['id']}) below it ran before it)" in inspected
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
