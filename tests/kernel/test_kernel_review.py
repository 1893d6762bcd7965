"""The user's Keep / Undo reaches the kernel over the `goat.review` comm (a real kernel, a real
jupyter_client frontend): the next `%%goat` run's transcript says what was decided, the model's
request says what was undone, and a malformed message is dropped without harming the run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.kernel_harness import KernelSession, goat_kernel, prepare_workspace

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

TURNS = [text_turn("Noted.", match="[first]"), text_turn("Noted again.", match="[second]")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("review")
    prepare_workspace(workspace)
    async with goat_kernel(workspace, server.url) as session:
        yield session


def send_decisions(kernel: KernelSession, data: Any) -> None:
    """What review_ui.ts does: open a comm to `goat.review` with the decisions as its data."""
    content = {"comm_id": f"review-{id(data):x}", "target_name": "goat.review", "data": data}
    kernel.client.shell_channel.send(kernel.client.session.msg("comm_open", content))


def decision(**changes: Any) -> dict[str, Any]:
    return {"action": "undid", "kind": "edited", "cell": 3, "cell_id": "a", "ran": ["x"], **changes}


def last_request_text(server: ReplayServer) -> str:
    return json.dumps(server.requests[-1]["messages"])


async def test_decisions_reach_the_transcript_and_the_model(
    kernel: KernelSession, server: ReplayServer
) -> None:
    send_decisions(kernel, {"decisions": "not a list"})
    send_decisions(
        kernel, {"path": "nb.ipynb", "decisions": [decision(), decision(action="kept", cell=4, cell_id="b")]}
    )
    result = await kernel.execute("%%goat\n[first] Go on.", timeout=120)
    assert result.status == "ok", result.messages
    shown = result.text()
    assert "Your review since the last run: undid goat's edit of cell 3, kept goat's edit of cell 4." in shown
    sent = last_request_text(server)
    assert "undid your edit of cell 3: it is back as it was before your edit" in sent
    assert "the kernel still holds what the undone code bound: `x`" in sent
    assert "kept your edit of cell 4 (id b)" in sent

    # Told once: the next run has nothing new to say.
    again = await kernel.execute("%%goat\n[second] And now?", timeout=120)
    assert again.status == "ok", again.messages
    assert "Your review since the last run" not in again.text()
    assert json.dumps(server.requests[-1]["messages"]).count("undid your edit of cell 3") == 1, (
        "kept in history once"
    )
