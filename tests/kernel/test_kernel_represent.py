"""What the model reads about objects and outputs, in a real kernel with the replay server: an
object's `_repr_llm_` and an output's `text/llm+plain` reach the model as such; a 1,700-column
DataFrame and a 200 MB array reach it within the budget with their statistics; a 2 MB output is stored
whole and the model's Read and Grep of the handle return the ranges it asks for."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.cassette import to_cassette
from goat_jupyter.replay.player import PickedTurn, ScriptPlayer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
BUDGET = 8_000
HANDLE = "HANDLE"  # in a scripted call: replaced by the path the last result named
SETUP = """
import numpy as np, pandas as pd
class Answer:
    def __repr__(self):
        return "Answer(...)"
    def _repr_llm_(self):
        return "THE MODEL-FACING ANSWER: 42 rows, mean 3.5"
rng = np.random.default_rng(0)
wide = pd.DataFrame(rng.random((50, 1700)), columns=[f"col{i}" for i in range(1700)])
wide.loc[3, "col1650"] = None
huge = rng.random((5000, 5000))
"""
BIG_CELL = "for i in range(40_000):\n    print(f'row {i:05d} ' + 'x' * 40)"
TURNS = [
    tool_turn("KernelInspect", {"expression": "Answer()"}, match="[repr]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[repr]"),
    tool_turn("RunCell", {"cell_id": "cell-1"}, match="[repr]"),
    tool_turn("RunCell", {"cell_id": "cell-2"}, match="[repr]"),
    tool_turn("Read", {"file_path": NB}, match="[repr]"),
    text_turn("Seen.", match="[repr]"),
    tool_turn("KernelInspect", {"expression": "wide"}, match="[big]"),
    tool_turn("KernelInspect", {"expression": "huge"}, match="[big]"),
    text_turn("Measured.", match="[big]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[spill]"),
    tool_turn("Read", {"file_path": HANDLE, "offset": 20_001, "limit": 3}, match="[spill]"),
    tool_turn(
        "Grep",
        {"pattern": "row 31337 ", "path": HANDLE, "output_mode": "content", "-n": True},
        match="[spill]",
    ),
    text_turn("Read it.", match="[spill]"),
]


class HandlePlayer(ScriptPlayer):
    """The scripted model, which reads the path a stored result named (known only once stored)."""

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        picked = super().pick(request)
        dumped = picked.turn.model_dump(exclude_none=True)
        if HANDLE not in json.dumps(dumped):
            return picked
        found = re.findall(r"stored whole at (\S+?\.txt)", json.dumps(request["messages"]))
        filled = json.loads(json.dumps(dumped).replace(HANDLE, found[-1]))
        return PickedTurn(to_cassette([filled]).turns[0], picked.index)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(source=HandlePlayer(to_cassette(TURNS))) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-represent")
    prepare_workspace(workspace)
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-represent", server.url)
    ) as session:
        for code in (SETUP, "%load_ext goat_jupyter"):
            done = await session.execute(code)
            assert done.status == "ok", done.error
        yield session


def tool_results(server: ReplayServer, match: str) -> list[str]:
    requests = [r for r in server.requests if match in json.dumps(r["messages"])]
    return [str(m["content"]) for m in requests[-1]["messages"] if m["role"] == "tool"]


async def run_goat(kernel: KernelSession, cells: list[dict[str, Any]], prompt: str) -> FakeNotebookFrontend:
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (kernel.cwd / NB).write_text(json.dumps(notebook))  # the saved file; Read sees the live cells
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    result = await kernel.execute(
        f"%%goat --new\n{prompt}", timeout=200, metadata={"cellId": cells[-1]["id"]}
    )
    assert result.status == "ok", result.error
    return frontend


async def test_repr_llm_and_llm_plain_outputs_reach_the_model_as_such(
    kernel: KernelSession, server: ReplayServer
) -> None:
    cells = [
        new_cell("code", "Answer()"),
        new_cell(
            "code",
            "from IPython.display import display\ndisplay({'text/plain': 'PLAIN ONLY', 'text/llm+plain': 'LLM VIEW: 7 outliers'}, raw=True)",
        ),
        new_cell("code", "pd.DataFrame({'a': range(100), 'b': ['x', 'y'] * 50})"),
        new_cell("code", "%%goat"),
    ]
    frontend = await run_goat(kernel, cells, "[repr] look")
    inspected, own, given, frame, read = tool_results(server, "[repr]")
    assert inspected.startswith("THE MODEL-FACING ANSWER: 42 rows") and "Answer(...)" not in inspected
    assert "[result]\nTHE MODEL-FACING ANSWER" in own and "Answer(...)" not in own
    assert "LLM VIEW: 7 outliers" in given and "PLAIN ONLY" not in given
    assert "min 0 mean 49.5 max 99" in frame and "top: 'x' 50, 'y' 50" in frame, (
        "goat's summary, not the repr"
    )
    saved = frontend.cells()
    assert saved[0]["outputs"][0]["data"]["text/llm+plain"].startswith("THE MODEL-FACING ANSWER")
    offered = saved[2]["outputs"][0]["data"]["text/llm+plain"]
    assert offered.startswith("pandas.DataFrame with shape (100, 2)") and len(offered) <= 4_000
    assert "text/html" in saved[2]["outputs"][0]["data"], "the notebook keeps its own view"
    shown = read.split(f'<outputs cell="{cells[1]["id"]}">')[1].split("</outputs>")[0]
    assert "LLM VIEW: 7 outliers" in shown and "PLAIN ONLY" not in shown, "Read of the live notebook, too"
    assert "min 0 mean 49.5 max 99" in read
    plain = await kernel.execute("{'k': 1}")
    [value] = plain.of_type("execute_result")
    assert "text/llm+plain" not in value["content"]["data"], "plain values get no copy"


async def test_a_wide_frame_and_a_200_mb_array_fit_the_budget_with_their_stats(
    kernel: KernelSession, server: ReplayServer
) -> None:
    await run_goat(kernel, [new_cell("code", "%%goat")], "[big] measure")
    wide, huge = tool_results(server, "[big]")
    assert len(wide) <= BUDGET and "stored whole" not in wide
    assert wide.startswith("pandas.DataFrame with shape (50, 1700)") and "dtypes: 1700 float64" in wide
    assert "columns with nulls: 1 of 1700 (col1650 1)" in wide
    assert re.search(r"col0\s+float64\s+0 null\s+min 0\.\d+ mean 0\.\d+ max 0\.\d+", wide)
    assert len(huge) <= BUDGET and "190.7 MB" in huge
    assert re.search(r"stats: min \S+ mean 0\.5 max 1 std 0\.2887", huge) and "corner:" in huge


async def test_a_large_output_is_stored_and_read_by_range(
    kernel: KernelSession, server: ReplayServer
) -> None:
    await run_goat(kernel, [new_cell("code", BIG_CELL), new_cell("code", "%%goat")], "[spill] print")
    ran, read, grep = tool_results(server, "[spill]")
    handle = Path(re.findall(r"stored whole at (\S+?\.txt)", ran)[0])
    assert len(ran) <= BUDGET and "row 00000 " in ran and "row 39999 " in ran and "row 20000" not in ran
    stored = handle.read_text()
    assert len(stored) > 2_000_000 and stored.count("\n") >= 40_000
    assert handle.is_relative_to(kernel.cwd / ".goat" / "sessions") and handle.parent.name == "outputs"
    lines = stored.split("\n")
    assert [line.split("\t", 1)[1] for line in read.splitlines()[:3]] == lines[20_000:20_003]
    assert "row 31337 " + "x" * 40 in grep
