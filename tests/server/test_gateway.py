"""Remote kernels: a Jupyter server started with `--gateway-url` against a local Jupyter Kernel
Gateway. The kernel runs in the gateway (its own folder, its own environment); `%%goat` reaches the
notebook only through the `goat.notebook` comm carried over the server's and the gateway's
websockets, as JupyterLab's gateway client carries it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell
from tests.remote_kernel import RemoteKernel, open_notebook
from tests.server_harness import TOKEN, JupyterServer, free_port, jupyter_server, server_env

pytest.importorskip("kernel_gateway")
pytestmark = [pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]

GATEWAY_TOKEN = "goat-gateway-token"
NB = "nb.ipynb"
TURNS = [
    tool_turn(
        "NotebookEdit",
        {
            "notebook_path": NB,
            "new_source": "print('from the agent')",
            "cell_type": "code",
            "edit_mode": "insert",
        },
        match="[insert]",
    ),
    text_turn("Inserted a cell.", match="[insert]"),
    tool_turn("Read", {"file_path": NB}, match="[nobridge]"),
    tool_turn(
        "NotebookEdit",
        {"notebook_path": NB, "new_source": "# lost", "cell_type": "markdown", "edit_mode": "insert"},
        match="[nobridge]",
    ),
    text_turn("Could not reach the notebook.", match="[nobridge]"),
]


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(TURNS) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, replay: ReplayServer) -> Iterator[str]:
    """A Kernel Gateway whose kernels run in their own folder with their own ~/.goat."""
    tmp = tmp_path_factory.mktemp("gateway")
    root = tmp / "kernels"
    root.mkdir()
    (root / ".goat").mkdir()
    (root / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01}))
    env = server_env(tmp / "home", replay_kernel_env(tmp / "home" / ".goat", replay.url))
    port = free_port()
    # The gateway gives its kernels only PATH and KERNEL_* unless told which of its variables to pass.
    passed = sorted(
        {*replay_kernel_env(tmp / "home" / ".goat", replay.url), "HOME", "PYTHONPATH", "IPYTHONDIR"}
    )
    command = [
        sys.executable, "-m", "kernel_gateway", "--KernelGatewayApp.ip=127.0.0.1", f"--KernelGatewayApp.port={port}",
        f"--KernelGatewayApp.auth_token={GATEWAY_TOKEN}", "--KernelGatewayApp.allow_origin=*", "--JupyterWebsocketPersonality.list_kernels=True",
        f"--KernelGatewayApp.env_process_whitelist={json.dumps(passed)}",
    ]  # fmt: skip
    with (tmp / "gateway.log").open("w") as log:
        process = subprocess.Popen(command, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for_gateway(url, process, tmp / "gateway.log")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_gateway(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("kernel gateway exited:\n" + log.read_text())
        request = urllib.request.Request(f"{url}/api", headers={"Authorization": f"token {GATEWAY_TOKEN}"})
        try:
            with urllib.request.urlopen(request, timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError("kernel gateway did not start:\n" + log.read_text())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, gateway: str) -> Iterator[JupyterServer]:
    args = (f"--gateway-url={gateway}", f"--GatewayClient.auth_token={GATEWAY_TOKEN}",
            "--GatewayClient.request_timeout=60", "--GatewayClient.connect_timeout=60")  # fmt: skip
    with jupyter_server(tmp_path_factory.mktemp("lab"), extra_args=args) as lab:
        yield lab


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(server: JupyterServer) -> AsyncIterator[RemoteKernel]:
    remote = await open_notebook(server, NB, TOKEN)
    loaded = await remote.execute("%load_ext goat_jupyter", timeout=120)
    assert loaded.status == "ok", loaded.messages
    yield remote
    remote.close()


async def test_the_kernel_runs_in_the_gateway_not_in_the_server(
    kernel: RemoteKernel, server: JupyterServer
) -> None:
    result = await kernel.execute("import os; print(os.getcwd())")
    assert result.stdout.strip().endswith("kernels") and str(server.root) not in result.stdout
    listed = await asyncio.to_thread(server.request, "GET", "/api/kernels")
    assert kernel.kernel_id in [k["id"] for k in listed.body]


async def test_a_goat_cell_inserts_a_cell_through_the_gateway_websocket(kernel: RemoteKernel) -> None:
    goat_cell = new_cell("code", "%%goat --new\n[insert] add a cell")
    kernel.frontend = FakeNotebookFrontend(NB, [goat_cell], server_root=str(kernel.server.root))
    result = await kernel.execute(goat_cell["source"], metadata={"cellId": goat_cell["id"]})
    assert result.status == "ok", result.error
    sources = [c["source"] for c in kernel.frontend.cells()]
    shown = result.text("text/plain") + result.text("text/markdown")
    assert sources == [goat_cell["source"], "print('from the agent')"], (shown, kernel.frontend.requests)
    ops = [r["op"] for r in kernel.frontend.requests]
    assert "insert_cell" in ops and ops[-1] == "list_cells", ops  # the edit was read back
    assert "Inserted a cell." in result.text("text/plain") + result.text("text/markdown")


async def test_without_a_notebook_bridge_the_remote_cell_says_so_and_finishes(kernel: RemoteKernel) -> None:
    """JupyterLab without goat's labextension closes the comm; the notebook file is on the server's
    disk, not the gateway's, so the kernel cannot fall back to it: the cell says so, never hangs."""
    goat_cell = new_cell("code", "%%goat --new\n[nobridge] add a cell")
    kernel.frontend = FakeNotebookFrontend(NB, [goat_cell], server_root=str(kernel.server.root), mode="close")
    result = await asyncio.wait_for(
        kernel.execute(goat_cell["source"], metadata={"cellId": goat_cell["id"]}), 150
    )
    assert result.status == "ok", result.error
    shown = result.text("text/plain") + result.text("text/markdown")
    assert "Could not reach the notebook." in shown
    assert [c["source"] for c in kernel.frontend.cells()] == [goat_cell["source"]]
    assert not (Path(kernel.server.root) / NB).exists()
    print(shown)
