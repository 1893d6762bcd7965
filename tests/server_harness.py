"""A real `jupyter server` subprocess with goat's extension, a token, and a temporary HOME."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TOKEN = "goat-test-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Reply:
    status: int
    body: Any
    raw: str


@dataclass
class JupyterServer:
    url: str
    home: Path
    root: Path
    env: dict[str, str]
    log: Path

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        token: str | None = TOKEN,
        content: bytes | None = None,
    ) -> Reply:
        """`body` as JSON, or `content` bytes as they are."""
        data = content if content is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"token {token}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                raw = response.read().decode()
                return Reply(response.status, json.loads(raw or "null"), raw)
        except urllib.error.HTTPError as exc:
            raw = exc.read().decode()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            return Reply(exc.code, parsed, raw)


def server_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update(
        {
            "HOME": str(home),
            "GOAT_HOME": str(home / ".goat"),
            "IPYTHONDIR": str(home / ".ipython"),
            "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        }
    )
    env.update(extra or {})
    return env


@contextmanager
def jupyter_server(
    tmp: Path, extra_env: dict[str, str] | None = None, extra_args: tuple[str, ...] = ()
) -> Iterator[JupyterServer]:
    home, root = tmp / "home", tmp / "root"
    root.mkdir(parents=True)
    (home / ".jupyter").mkdir(parents=True)
    config = {"ServerApp": {"jpserver_extensions": {"goat_jupyter": True}}}
    (home / ".jupyter" / "jupyter_server_config.json").write_text(json.dumps(config))
    port = free_port()
    env = server_env(home, extra_env)
    log = tmp / "server.log"
    command = [
        sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
        *extra_args,
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    server = JupyterServer(f"http://127.0.0.1:{port}", home, root, env, log)
    try:
        _wait_ready(server, process)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(server: JupyterServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("jupyter server exited:\n" + server.log.read_text())
        try:
            if server.request("GET", "/api/status").status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError("jupyter server did not start:\n" + server.log.read_text())
