"""Findings that cite their cell, in a real kernel: a scripted answer's citations are checked against
the live notebook's outputs and marked in the %%goat cell (a right value verified, a wrong one and a
missing cell flagged); the marks survive saving the notebook and `nbconvert --to goat`. With
`cite_numbers: remind`, uncited numbers reach the model as a note with its next request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.kernel.test_kernel_transcript import convert, outputs_of
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = pytest.mark.timeout(300)
DATA_OUTPUT = {"output_type": "execute_result", "execution_count": 3, "metadata": {}}
ANSWER = (
    "The mean price is `0.42` [cell 3, out 1]. Its maximum is 0.99 [cell 3, out 1], "
    'the city "Lyon" [cell 3] and 17 rows [cell 9].'
)
TURNS = [
    text_turn(ANSWER, match="mean price"),
    text_turn("Prices rose by 12.5% over 1,234 days.", match="[uncited]"),
    text_turn("Noted.", match="[next]"),
]
VERIFIED = "[cell 3, out 1 ✓]"
WRONG = "[cell 3, out 1 ⚠ not in output: 0.99]"
WRONG_STRING = '[cell 3 ⚠ not in output: "Lyon"]'
MISSING = "[cell 9 ⚠ no such cell]"


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[KernelSession, ReplayServer, FakeNotebookFrontend]]:
    prepare_workspace(tmp_path)
    with ReplayServer(TURNS) as server:
        env = replay_kernel_env(tmp_path / "home", server.url, mode="default")
        async with KernelSession(tmp_path, env) as kernel:
            loaded = await kernel.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.messages
            data = new_cell(
                "code",
                "df.price.describe()",
                execution_count=3,
                outputs=[{**DATA_OUTPUT, "data": {"text/plain": "mean 0.421300\nmax 0.870000\ncity Paris"}}],
            )
            cells = [data, new_cell("code", "%%goat\nwhat is the mean price?")]
            frontend = FakeNotebookFrontend("nb.ipynb", cells, server_root=str(tmp_path)).attach(kernel)
            yield kernel, server, frontend


def answer_output(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in outputs if "The mean price" in o.get("data", {}).get("text/plain", ""))


async def test_cited_values_are_checked_marked_and_survive_save_and_nbconvert(
    rig: tuple[KernelSession, ReplayServer, FakeNotebookFrontend], tmp_path: Path
) -> None:
    kernel, _, frontend = rig
    goat_cell = frontend.cells()[1]
    result = await kernel.execute(goat_cell["source"], timeout=120, metadata={"cellId": goat_cell["id"]})
    assert result.status == "ok", result.error
    answer = answer_output(outputs_of(result))
    plain, markdown = answer["data"]["text/plain"], answer["data"]["text/markdown"]
    for mark in (VERIFIED, WRONG, WRONG_STRING, MISSING):
        assert mark in plain, plain
    assert plain.count("✓") == 1 and plain.count("⚠") == 3, plain
    assert "](#goat-cite-3-1-ok)" in markdown and markdown.count("](#goat-cite-3-1-bad)") == 1, markdown
    assert "](#goat-cite-3-0-bad)" in markdown and "](#goat-cite-9-0-bad)" in markdown, markdown
    assert answer["metadata"]["goat"]["transcript"] == plain

    code = nbformat.v4.new_code_cell(goat_cell["source"], outputs=outputs_of(result))  # pyright: ignore[reportUnknownMemberType]
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[code]), saved)  # pyright: ignore[reportUnknownMemberType]
    reread = json.dumps(nbformat.read(saved, as_version=4), ensure_ascii=False)  # pyright: ignore[reportUnknownMemberType]
    assert "#goat-cite-3-1-ok" in reread and json.dumps(WRONG, ensure_ascii=False)[1:-1] in reread
    text = convert(saved, "goat_jupyter.ui.export.TranscriptExporter")
    for mark in (VERIFIED, WRONG, WRONG_STRING, MISSING):
        assert mark in text, text
    assert "goat-cite" not in text, "the text transcript keeps the plain marks, not the links"


async def test_an_answer_without_citations_is_left_as_written(
    rig: tuple[KernelSession, ReplayServer, FakeNotebookFrontend],
) -> None:
    kernel, server, _ = rig
    result = await kernel.execute("%%goat\n[uncited] how did prices move?", timeout=120)
    assert result.status == "ok", result.error
    texts = [o["data"].get("text/plain", "") for o in outputs_of(result) if "data" in o]
    assert "Prices rose by 12.5% over 1,234 days." in texts
    after = await kernel.execute("%%goat\n[next] thanks", timeout=120)
    assert after.status == "ok", after.error
    assert "without saying where" not in json.dumps(server.requests[-1]["messages"]), "cite_numbers is off"


async def test_remind_tells_the_model_about_uncited_numbers_at_its_next_request(
    rig: tuple[KernelSession, ReplayServer, FakeNotebookFrontend],
) -> None:
    kernel, server, _ = rig
    configured = await kernel.execute("%goat config cite_numbers=remind")
    assert configured.status == "ok", configured.error
    result = await kernel.execute("%%goat\n[uncited] how did prices move?", timeout=120)
    assert result.status == "ok", result.error
    asked = len(server.requests)
    after = await kernel.execute("%%goat\n[next] thanks", timeout=120)
    assert after.status == "ok", after.error
    sent = json.dumps(server.requests[asked]["messages"], ensure_ascii=False)
    assert "Your last answer stated numbers without saying where they came from (12.5%, 1,234)" in sent
    assert "[cell 7, out 1]" in sent, "the note says how to cite"
