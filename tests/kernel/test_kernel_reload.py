"""A browser tab that reloads while goat waits for an approval can still answer it.

The first client runs the `%%goat` cell and then goes silent, as a tab does when it reloads. A second
client (the reloaded tab: a new session id) asks `goat.live` what is running, gets the widget states
the way jupyterlab_widgets restores them (`jupyter.widget.control`), clicks the prompt's button and
receives the rest of the run's output, which the labextension routes into the cell by its parent id.
"""

from __future__ import annotations

import asyncio
import queue
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, goat_kernel, prepare_workspace, wait_for

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

Message = dict[str, Any]
TURNS = [
    tool_turn("Bash", {"command": "echo answered > after_reload.txt"}, match="[reload]"),
    text_turn("Written after the reload.", match="[reload]"),
    tool_turn("Bash", {"command": "echo never > never.txt"}, match="[reload-stop]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reload")
    prepare_workspace(path)
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(server: ReplayServer, workspace: Path) -> AsyncIterator[KernelSession]:
    async with goat_kernel(workspace, server.url, mode="default") as session:
        yield session


class ReloadedTab:
    """A second client of the same kernel, with its own session id, reading iopub for itself."""

    def __init__(self, kernel: KernelSession) -> None:
        # Its own client and Session (a new session id), as a reloaded tab has; `km.client()` would share
        # the first client's Session and zmq context.
        self.client = AsyncKernelClient(connection_file=kernel.km.connection_file)
        self.client.load_connection_file()
        self.client.start_channels()
        self.iopub: list[Message] = []

    async def read(self, until: Any, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise TimeoutError("the reloaded tab did not see what it waited for")
            try:
                self.iopub.append(await self.client.get_iopub_msg(timeout=0.05))
            except queue.Empty:
                continue

    def comm_open(self, target: str, data: dict[str, Any], metadata: dict[str, Any] | None = None) -> str:
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": target, "data": data}
        self.client.shell_channel.send(self.client.session.msg("comm_open", content, metadata=metadata))
        return comm_id

    def comm_msg(self, comm_id: str, data: dict[str, Any]) -> None:
        msg = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(msg)

    def on_comm(self, comm_id: str) -> list[Message]:
        return [
            m["content"]["data"]
            for m in self.iopub
            if m["header"]["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id
        ]

    def of_parent(self, msg_id: str, kind: str) -> list[Message]:
        return [
            m
            for m in self.iopub
            if m["header"]["msg_type"] == kind and m["parent_header"].get("msg_id") == msg_id
        ]

    async def ask_live(self) -> dict[str, Any]:
        comm = self.comm_open("goat.live", {})
        await self.read(lambda: bool(self.on_comm(comm)))
        return self.on_comm(comm)[0]

    def close(self) -> None:
        self.client.stop_channels()


async def test_nothing_runs_nothing_is_listed(kernel: KernelSession) -> None:
    tab = ReloadedTab(kernel)
    try:
        assert await tab.ask_live() == {"runs": []}
    finally:
        tab.close()


async def test_a_reloaded_tab_restores_the_prompt_answers_it_and_gets_the_rest(
    kernel: KernelSession, workspace: Path
) -> None:
    cell = asyncio.ensure_future(
        kernel.execute("%%goat --new\n[reload] write it", timeout=120, metadata={"cellId": "goat-cell-1"})
    )
    tab = ReloadedTab(kernel)
    try:
        button = await kernel.wait_widget("ButtonModel", description="Allow once")
        run_msg = [m for m in kernel.iopub_log if m["header"]["msg_type"] == "execute_input"][-1]
        msg_id = run_msg["parent_header"]["msg_id"]

        live = await tab.ask_live()
        [run] = live["runs"]
        assert run["msg_id"] == msg_id and run["cell_id"] == "goat-cell-1"
        assert run["execution_count"] == run_msg["content"]["execution_count"]
        [prompt] = run["prompts"]
        assert "goat asks permission for Bash" in prompt["text"]
        # Everything the run showed so far, from the kernel (the saved notebook lags behind): the header on
        # top, the tool's row, and the prompt with its widget view, under its display id.
        shown = [item["output"]["data"].get("text/plain", "") for item in run["outputs"]]
        assert shown[0].startswith("goat · model"), shown
        assert any("echo answered > after_reload.txt" in text for text in shown[1:])
        [asked] = [item for item in run["outputs"] if item["display_id"] == prompt["display_id"]]
        assert (
            asked["output"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            == prompt["model_id"]
        )

        # What jupyterlab_widgets does on reload: every model's state, while the cell still awaits.
        control = tab.comm_open("jupyter.widget.control", {}, {"version": "1.0.0"})
        tab.comm_msg(control, {"method": "request_states"})
        await tab.read(lambda: bool(tab.on_comm(control)))
        states = tab.on_comm(control)[0]["states"]
        assert prompt["model_id"] in states and button in states
        assert not (workspace / "after_reload.txt").exists(), "nothing ran before the answer"

        tab.comm_msg(button, {"method": "custom", "content": {"event": "click"}})
        await tab.read(
            lambda: any(m["content"]["execution_state"] == "idle" for m in tab.of_parent(msg_id, "status")),
            timeout=60,
        )
        assert (workspace / "after_reload.txt").read_text() == "answered\n"
        updates = tab.of_parent(msg_id, "update_display_data")
        record = [u for u in updates if u["content"]["transient"]["display_id"] == prompt["display_id"]]
        assert record and "Allowed once by the user" in record[-1]["content"]["data"]["text/plain"]
        shown = " ".join(
            str(m["content"].get("data", {}).get("text/plain", ""))
            for kind in ("display_data", "update_display_data")
            for m in tab.of_parent(msg_id, kind)
        )
        assert "Written after the reload." in shown, "the reloaded tab receives the rest of the run"
        result = await asyncio.wait_for(cell, 60)
        assert result.status == "ok", result.error
        assert await tab.ask_live() == {"runs": []}, "an answered prompt and a finished run are gone"
        check = await kernel.execute(
            "from goat_jupyter.kernel import live\n"
            "print('send' in vars(get_ipython().kernel.session), len(live._taps), len(live._outputs))"
        )
        assert check.stdout.strip() == "False 0 0", "after the run the kernel's Session sends as before"
    finally:
        if not cell.done():
            await kernel.interrupt()
            await asyncio.wait_for(cell, 30)
        tab.close()


async def test_an_interrupted_prompt_is_no_longer_listed(kernel: KernelSession) -> None:
    cell = asyncio.ensure_future(kernel.execute("%%goat --new\n[reload-stop] again", timeout=120))
    tab = ReloadedTab(kernel)
    try:
        before = len(kernel.widgets("ButtonModel", description="Allow once"))
        await wait_for(lambda: len(kernel.widgets("ButtonModel", description="Allow once")) > before, 60)
        assert len((await tab.ask_live())["runs"][0]["prompts"]) == 1
        await kernel.interrupt()
        await asyncio.wait_for(cell, 30)
        assert await tab.ask_live() == {"runs": []}
    finally:
        tab.close()
