"""Kernels started the way the README says (`jupyter lab`, goat's server extension enabled) do not
run an `ipykernel_launcher.py` or a shadowing module planted in their folder; a plain
`python -m ipykernel_launcher` there does (the attack is real)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from jupyter_client.blocking.client import BlockingKernelClient

from goat_jupyter.server.kernel_launch import SAFE_LAUNCH, safe_argv
from tests.server_harness import JupyterServer, jupyter_server

PLANTED = "from pathlib import Path\nPath({marker!r}).write_text('ran')\nraise SystemExit(3)\n"


def plant(folder: Path) -> list[Path]:
    markers: list[Path] = []
    for module in ("ipykernel_launcher", "json", "traitlets", "zmq"):
        marker = folder / f"PWNED-{module}"
        (folder / f"{module}.py").write_text(PLANTED.format(marker=str(marker)))
        markers.append(marker)
    (folder / "helper.py").write_text("VALUE = 42\n")
    return markers


@pytest.mark.parametrize(
    ("argv", "rewritten"),
    [
        (["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], True),
        (["python", "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "c"], True),
        (["python", "-X", "frozen_modules=off", "-m", "ipykernel_launcher", "-f", "c"], True),
        (["python", "-m", "other_kernel", "-f", "c"], False),
        (["python", "script.py", "-m", "ipykernel_launcher"], False),
        (["python", "-c", "x", "-m", "ipykernel_launcher"], False),
        (["R", "--slave"], False),
    ],
)
def test_only_ipykernel_launches_are_rewritten(argv: list[str], rewritten: bool) -> None:
    safe = safe_argv(argv)
    assert (safe is not None) == rewritten
    if safe is not None:
        assert "-m" not in safe and SAFE_LAUNCH in safe and safe[-2:] == argv[-2:]


def test_a_plain_launch_runs_the_planted_launcher(tmp_path: Path) -> None:
    markers = plant(tmp_path)
    subprocess.run([sys.executable, "-m", "ipykernel_launcher", "--version"], cwd=tmp_path, check=False)
    assert markers[0].exists()


def test_the_safe_launch_runs_the_real_kernel(tmp_path: Path) -> None:
    markers = plant(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", SAFE_LAUNCH, "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "IPython" in done.stdout, done.stderr
    assert not any(marker.exists() for marker in markers)


def test_a_kernel_the_server_starts_does_not_run_planted_modules(tmp_path: Path) -> None:
    with jupyter_server(tmp_path) as server:
        markers = plant(server.root)
        reply = server.request("POST", "/api/kernels", {"name": "python3", "path": ""})
        assert reply.status == 201, reply.raw
        kernel_id = reply.body["id"]
        try:
            client = connect(server, kernel_id)
            out = run(client, "import json, helper; print(json.__file__, helper.VALUE)")
            client.stop_channels()
        finally:
            server.request("DELETE", f"/api/kernels/{kernel_id}")
    assert not any(marker.exists() for marker in markers), [m.name for m in markers if m.exists()]
    assert str(server.root) not in out.split()[0] and out.split()[1] == "42", (
        out
    )  # real json; neighbours import


def connect(server: JupyterServer, kernel_id: str) -> BlockingKernelClient:
    connection = server.home / "runtime" / f"kernel-{kernel_id}.json"
    deadline = time.monotonic() + 60
    while not connection.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels(hb=False)
    client.wait_for_ready(timeout=60)
    return client


def run(client: BlockingKernelClient, code: str) -> str:
    printed: list[str] = []

    def collect(message: dict[str, object]) -> None:
        content = message.get("content")
        if message.get("msg_type") == "stream" and isinstance(content, dict):
            printed.append(str(content.get("text", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]

    client.execute_interactive(code, output_hook=collect, timeout=60)
    return "".join(printed)
