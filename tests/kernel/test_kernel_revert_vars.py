""" "Revert this run" restores kernel variables: names RunCell rebound or deleted come back, objects it
changed in place come back from their copy, an object over the copy budget is listed as not restored,
and a variable the user changed after the run is named and left alone."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
SETUP = """
import numpy as np, pandas as pd
counter = 0
df = pd.DataFrame({"x": [1, 2], "z": [3, 4]})
y = "keep me"
w = 1
items = [1, 2]
big = np.zeros(500_000)  # 4 MB, over the 1 MB budget of this workspace
"""
AGENT_CELL = """counter += 100
df.drop(columns=["x"], inplace=True)
del y
w = 2
items.append(3)
big[0] = 5
made_by_the_run = 1
"""
TURNS = [
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[revert]"),
    tool_turn("KernelInspect", {"expression": "items.pop()"}, match="[revert]"),
    text_turn("Ran it.", match="[revert]"),
    text_turn("Understood.", match="[after-undo]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-revert")
    (workspace / ".goat").mkdir()
    settings = {"retry_base_delay_s": 0.01, "revert_memory_mb": 1}
    (workspace / ".goat" / "settings.json").write_text(json.dumps(settings))
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-revert", server.url)
    ) as session:
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        yield session


async def value(kernel: KernelSession, expression: str) -> object:
    result = await kernel.execute(f"import json as _j; print(_j.dumps({expression}))")
    assert result.status == "ok", result.error
    return json.loads(result.stdout)


async def test_revert_restores_variables_and_says_what_it_could_not(
    kernel: KernelSession, server: ReplayServer
) -> None:
    setup = await kernel.execute(SETUP)
    assert setup.status == "ok", setup.error
    cells = [new_cell("code", AGENT_CELL), new_cell("code", "%%goat\n[revert] run it")]
    FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    run = await kernel.execute(
        "%%goat --new\n[revert] run it", timeout=120, metadata={"cellId": cells[1]["id"]}
    )
    assert run.status == "ok", run.error
    assert await value(kernel, "[counter, list(df.columns), 'y' in globals(), w, items, float(big[0])]") == [
        100,
        ["z"],
        False,
        2,
        [1, 2],
        5.0,
    ]
    user = await kernel.execute("w = 3", metadata={"cellId": "user-cell"})  # the user's own run, after goat's
    assert user.status == "ok"

    undo = await kernel.execute("%goat undo", timeout=60)
    assert undo.status == "ok", undo.error
    report = undo.text()
    restored = await value(
        kernel, "[counter, list(df.columns), y, w, items, float(big[0]), 'made_by_the_run' in globals()]"
    )
    assert restored == [0, ["x", "z"], "keep me", 3, [1, 2], 5.0, False]
    for line in (
        "restored `counter`",
        "restored `df`",
        "restored `y`",
        "removed `made_by_the_run` (created by the run)",
    ):
        assert line in report, report
    assert "`w`: changed after the run by code you ran, left as is" in report
    assert "`big`: a ndarray of 4.0 MB, over what was left of the run's copy budget" in report
    assert "restored `items`" not in report, "RunCell appended, KernelInspect popped: nothing to restore"

    after = await kernel.execute("%%goat\n[after-undo] ok?", timeout=120)
    assert after.status == "ok", after.error
    prompt = [m for m in server.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert "restored `counter`" in str(prompt) and "`w`: changed after the run" in str(prompt)
