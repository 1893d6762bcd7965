"""A key removed in the settings panel leaves the running kernel and stays out after Kernel → Restart
(issue 33 point 10): a real `jupyter server` with goat's extension, its REST endpoints as the panel
calls them, a kernel it started, and the replay server as the model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.server_harness import JupyterServer, jupyter_server

pytestmark = pytest.mark.timeout(300)
STORED = "sk-stored-in-the-panel-0123"


def connect(server: JupyterServer, kernel_id: str) -> BlockingKernelClient:
    connection = server.home / "runtime" / f"kernel-{kernel_id}.json"
    deadline = time.monotonic() + 60
    while not connection.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels(hb=False)  # no heartbeat: a client without a manager reads a late one as dead
    client.wait_for_ready(timeout=60)
    return client


def run(client: BlockingKernelClient, code: str) -> str:
    """What the cell printed and displayed (final text/plain of each display), as a user reads it."""
    shown: dict[str, str] = {}

    def collect(msg: dict[str, Any]) -> None:
        content = msg["content"]
        kind = msg["msg_type"]
        if kind == "stream":
            shown[msg["header"]["msg_id"]] = content["text"]
        elif kind in ("display_data", "update_display_data", "execute_result", "error"):
            key = (content.get("transient") or {}).get("display_id") or msg["header"]["msg_id"]
            data = content.get("data") or {}
            shown[key] = str(data.get("text/plain", "")) + str(content.get("evalue", ""))

    client.execute_interactive(code, output_hook=collect, timeout=180)
    return "\n".join(shown.values())


def test_a_removed_key_leaves_the_running_kernel_and_a_restarted_one(tmp_path: Path) -> None:
    turns = [text_turn("Answered with the stored key."), text_turn("Answered with the new key.")]
    with ReplayServer(turns) as model:
        env = {"OPENAI_API_BASE": model.url, "GOAT_MODEL": "openai/replay", "GOAT_PERMISSION_MODE": "default"}
        with jupyter_server(tmp_path, env) as server:
            assert server.request("PUT", "/goat/keys", {"set": {"OPENAI_API_KEY": STORED}}).status == 200
            kernel_id = server.request("POST", "/api/kernels", {"name": "python3"}).body["id"]
            client = connect(server, kernel_id)
            try:
                run(client, "%load_ext goat_jupyter")
                first = run(client, "%%goat\nhello")
                assert "Answered with the stored key." in first and len(model.remaining) == 1, first

                assert server.request("PUT", "/goat/keys", {"remove": ["OPENAI_API_KEY"]}).status == 200
                running = run(client, "%%goat\nhello again")
                assert "No API key for openai/replay" in running, running
                assert len(model.remaining) == 1, "the running kernel sent no request with the removed key"
                assert run(client, "import os; print(os.environ.get('OPENAI_API_KEY'))").strip() == "None"

                assert server.request("POST", f"/api/kernels/{kernel_id}/restart").status == 200
                client.stop_channels()
                client = connect(server, kernel_id)
                restarted = run(client, "import os; print(os.environ.get('OPENAI_API_KEY'))")
                assert restarted.strip() == "None", "Restart reused the launch environment with the key"
                has_key = run(
                    client,
                    "from goat_jupyter.replay.offline import has_provider_key\nprint(has_provider_key())",
                )
                assert has_key.strip() == "False", "the examples would still use the real model"

                assert (
                    server.request("PUT", "/goat/keys", {"set": {"OPENAI_API_KEY": "sk-new-key-4567"}}).status
                    == 200
                )
                assert server.request("POST", f"/api/kernels/{kernel_id}/restart").status == 200
                client.stop_channels()
                client = connect(server, kernel_id)
                said = run(client, "from goat_jupyter.replay.offline import replay_unless_key\n"
                           "print(replay_unless_key('none.json'))")  # fmt: skip
                assert said.strip() == "Using the real model openai/replay (a provider key is set).", said
                run(client, "%load_ext goat_jupyter")
                second = run(client, "%%goat\nhello once more")
                assert "Answered with the new key." in second, second
            finally:
                client.stop_channels()
                server.request("DELETE", f"/api/kernels/{kernel_id}")
