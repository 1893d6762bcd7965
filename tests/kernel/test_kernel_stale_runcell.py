"""Stale cells as the model hears of them, against a real kernel: cells goat's RunCell runs above the
%%goat cell are not stale, nor is the %%goat cell; an in-place change made by RunCell (`lst.append`) or
by the user (`x += 1`) makes the cells that read the name stale, and re-running them clears it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, goat_kernel, prepare_workspace
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
TURNS = [
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[above]"),
    tool_turn("RunCell", {"cell_id": "cell-1"}, match="[above]"),
    tool_turn("RunCell", {"cell_id": "cell-2"}, match="[above]"),
    tool_turn("Read", {"file_path": NB}, match="[above]"),
    text_turn("Ran them.", match="[above]"),
    text_turn("Nothing stale.", match="[again]"),
    tool_turn("RunCell", {"cell_id": "cell-4"}, match="[append]"),
    tool_turn("Read", {"file_path": NB}, match="[append]"),
    text_turn("Appended.", match="[append]"),
    text_turn("Seen.", match="[after]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-stale") / "ws"
    workspace.mkdir()
    prepare_workspace(workspace)
    (workspace / NB).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    async with goat_kernel(workspace, server.url) as session:
        yield session


CELLS = [
    new_cell("code", "x = 1\nlst = [x]"),
    new_cell("code", "y = x * 2"),
    new_cell("code", "n = len(lst)"),
    new_cell("code", ""),  # the %%goat cell
    new_cell("code", "lst.append(3)"),
    new_cell("code", "x += 1"),
]
IDS = [cell["id"] for cell in CELLS]


async def goat(kernel: KernelSession, server: ReplayServer, tag: str) -> list[dict[str, Any]]:
    """Run a %%goat prompt in the goat cell; the messages of its last request to the model."""
    CELLS[3]["source"] = f"%%goat\n{tag} go"
    result = await kernel.execute(f"%%goat\n{tag} go", timeout=120, metadata={"cellId": IDS[3]})
    assert result.status == "ok", result.error
    return [r for r in server.requests if tag in json.dumps(r["messages"])][-1]["messages"]


def prompt_of(messages: list[dict[str, Any]], tag: str) -> str:
    return [str(m["content"]) for m in messages if m["role"] == "user" and tag in str(m["content"])][-1]


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


@pytest.fixture(scope="module")
def frontend(kernel: KernelSession) -> FakeNotebookFrontend:
    return FakeNotebookFrontend(NB, CELLS, server_root=str(kernel.cwd)).attach(kernel)


async def test_cells_run_above_the_goat_cell_by_run_cell_are_not_stale(
    kernel: KernelSession, server: ReplayServer, frontend: FakeNotebookFrontend
) -> None:
    messages = await goat(kernel, server, "[above]")
    read = tool_results(messages)[-1]
    assert "stale:" not in read and "edited since" not in read, read
    assert all('kernel="ran as [' in read.split(f'id="{IDS[i]}"')[1][:60] for i in (0, 1, 2)), read
    assert f'id="{IDS[3]}" type="code">' in read, "the %%goat cell gets no kernel state"
    again = prompt_of(await goat(kernel, server, "[again]"), "[again]")
    assert "Kernel state vs the notebook" not in again, "running cells above goat marks nothing"


async def test_an_append_by_run_cell_makes_the_reader_stale(
    kernel: KernelSession, server: ReplayServer, frontend: FakeNotebookFrontend
) -> None:
    messages = await goat(kernel, server, "[append]")
    read = tool_results(messages)[-1]
    stale = f"stale: reads `lst`, which cell 5 (id {IDS[4]}) changed after this cell ran"
    assert f'{stale}"' in read and read.count("stale:") == 1, read
    assert (await kernel.execute("lst")).text().strip() == "[1, 3]"


async def test_augmented_assignment_by_the_user_and_a_rerun_clears_it(
    kernel: KernelSession, server: ReplayServer, frontend: FakeNotebookFrontend
) -> None:
    for index in (5, 2):  # x += 1 makes cell 2 stale; re-running cell 3 brings it back in line
        result = await kernel.execute(CELLS[index]["source"], metadata={"cellId": IDS[index]})
        assert result.status == "ok", result.error
    prompt = prompt_of(await goat(kernel, server, "[after]"), "[after]")
    assert (
        f"stale: reads `x`, which cell 6 (id {IDS[5]}) changed after this cell ran; names it set: y" in prompt
    )
    assert f"cell 3 (id {IDS[2]})" not in prompt and f"cell 4 (id {IDS[3]})" not in prompt
    assert f"cell 1 (id {IDS[0]})" not in prompt, "cell 1 reads nothing: `x += 1` does not make it stale"
