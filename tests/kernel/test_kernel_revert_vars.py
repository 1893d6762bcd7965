""" "Revert this run" restores kernel variables: names RunCell rebound or deleted come back, objects it
changed in place come back from their copy, an object over the copy budget is listed as not restored,
and a variable the user changed after the run is named and left alone; one the user only looked at
is restored (issue 33 point 5)."""

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
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[read-then-revert]"),
    text_turn("Doubled.", match="[read-then-revert]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[write-then-revert]"),
    text_turn("Doubled.", match="[write-then-revert]"),
]
DOUBLE = "sales['revenue'] = sales['revenue'] * 2\ntotal = float(sales['revenue'].sum())"


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


async def _double_sales(kernel: KernelSession, tag: str) -> None:
    """The agent's RunCell doubles `sales['revenue']` and sets `total` (issue 33's scenario)."""
    setup = await kernel.execute("sales = pd.DataFrame({'revenue': [10.0, 20.0]})\ntotal = 0")
    assert setup.status == "ok", setup.error
    cells = [new_cell("code", DOUBLE), new_cell("code", f"%%goat\n{tag} double it")]
    FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    run = await kernel.execute(
        f"%%goat --new\n{tag} double it", timeout=120, metadata={"cellId": cells[1]["id"]}
    )
    assert run.status == "ok", run.error
    assert await value(kernel, "[total, sales['revenue'].tolist()]") == [60.0, [20.0, 40.0]]


async def test_a_dataframe_the_user_only_looked_at_is_reverted(kernel: KernelSession) -> None:
    await _double_sales(kernel, "[read-then-revert]")
    for look in ("print(total, sales['revenue'].sum())", "sales.describe()", "sales.sort_values('revenue')"):
        read = await kernel.execute(look, metadata={"cellId": "user-cell"})
        assert read.status == "ok", read.error
    undo = await kernel.execute("%goat undo", timeout=60)
    assert undo.status == "ok", undo.error
    report = undo.text()
    assert await value(kernel, "[total, sales['revenue'].tolist()]") == [0, [10.0, 20.0]], report
    assert "restored `sales`" in report and "restored `total`" in report
    assert "left as is" not in report and "Partly" not in report
    assert "Reverted %%goat run" in undo.text("text/html")


async def test_a_dataframe_the_user_changed_is_left_named_and_the_headline_says_partly(
    kernel: KernelSession,
) -> None:
    await _double_sales(kernel, "[write-then-revert]")
    write = await kernel.execute("sales.loc[0, 'revenue'] = 1.0", metadata={"cellId": "user-cell"})
    assert write.status == "ok", write.error
    undo = await kernel.execute("%goat undo", timeout=60)
    assert undo.status == "ok", undo.error
    report = undo.text()
    assert await value(kernel, "[total, sales['revenue'].tolist()]") == [0, [1.0, 40.0]], report
    assert "`sales`: changed after the run by code you ran, left as is" in report
    assert "restored `total`" in report
    html = undo.text("text/html")
    assert "Partly reverted %%goat run" in html and "by the user; 1 left as is" in html
