"""Issue 24's acceptance for cell locks, in a real kernel in bypassPermissions with the fake frontend:
`goat:no-run` is refused to RunCell, a `goat:locked` cell asks for NotebookEdit (the user clicks Deny),
`RunCell(tag:train)` in permissions.deny blocks that cell, and Read shows the lock to the model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env, trust_workspace
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
TAG = "[locks]"
TURNS = [
    tool_turn("RunCell", {"notebook_path": NB, "cell_id": "cell-0"}, match=TAG),
    tool_turn("Read", {"file_path": NB}, match=TAG),
    tool_turn(
        "NotebookEdit", {"notebook_path": NB, "cell_id": "cell-1", "new_source": "rows = []"}, match=TAG
    ),
    tool_turn("RunCell", {"notebook_path": NB, "cell_id": "cell-2"}, match=TAG),
    tool_turn("RunCell", {"notebook_path": NB, "cell_id": "cell-3"}, match=TAG),
    text_turn("Left the protected cells alone.", match=TAG),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


async def test_locks_and_tag_rules_hold_in_bypass_permissions(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    workspace = tmp_path_factory.mktemp("cell-locks")
    prepare_workspace(workspace)
    settings_file = workspace / ".goat" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["permissions"] = {"deny": ["RunCell(tag:train)"]}
    settings_file.write_text(json.dumps(settings))
    home = workspace.parent / "home-locks"
    env = replay_kernel_env(home, server.url)  # bypassPermissions
    trust_workspace(workspace, home)
    cells = [
        new_cell("code", "sent = 'e-mail sent'", {"tags": ["goat:no-run"]}),
        new_cell("code", "rows = load()", {"tags": ["Goat:Locked"]}),
        new_cell("code", "trained = 'model trained'", {"tags": ["train"]}),
        new_cell("code", "free = 'ran'"),
        new_cell("code", f"%%goat\n{TAG} ..."),
    ]
    (workspace / NB).write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    async with KernelSession(workspace, env) as kernel:
        assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
        frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
        running = asyncio.ensure_future(
            kernel.execute(f"%%goat --new\n{TAG} tidy up", timeout=120, metadata={"cellId": cells[4]["id"]})
        )
        try:
            kernel.click(await kernel.wait_widget("ButtonModel", timeout=150, description="Deny"))
        except TimeoutError:
            await kernel.interrupt()
            done = await asyncio.wait_for(running, 30)
            raise AssertionError(done.text("text/plain") + done.text("text/markdown") + done.stdout) from None
        result = await asyncio.wait_for(running, 120)
        assert result.status == "ok", result.error
        names = await kernel.execute(
            "print(sorted(n for n in ('sent', 'trained', 'free') if n in globals()))"
        )
    assert names.stdout.strip() == "['free']"
    assert frontend.cell(cells[1]["id"])["source"] == "rows = load()"
    assert not kernel.widgets("ButtonModel", description="Always allow"), "a lock offers allow once only"
    requests = [r for r in server.requests if TAG in json.dumps(r["messages"])]
    no_run, read, edit, train, free = [
        str(m["content"]) for m in requests[-1]["messages"] if m["role"] == "tool"
    ]
    assert no_run.startswith("Error:") and "goat:no-run" in no_run
    assert 'tags="Goat:Locked"' in read and "asks the user" in read and "you may not run it" in read
    assert edit.startswith("Error:") and "denied" in edit
    assert train.startswith("Error:") and "RunCell(tag:train)" in train
    assert free.startswith("Ran cell 4")
