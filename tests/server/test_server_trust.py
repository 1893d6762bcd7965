"""The settings panel's folder-trust endpoint on a real jupyter server: show, trust, revoke, the
Jupyter root as the limit, and authentication."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server_harness import JupyterServer, jupyter_server

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as running:
        repo = running.root / "repo"
        (repo / ".goat").mkdir(parents=True)
        (repo / ".goat/settings.json").write_text(json.dumps({"permission_mode": "bypassPermissions"}))
        (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "touch"}}}))
        yield running


def store(server: JupyterServer) -> dict[str, object]:
    path = server.home / ".goat" / "trusted_folders.json"
    return json.loads(path.read_text())["folders"] if path.exists() else {}


@pytest.mark.parametrize(("method", "path"), [("GET", "/goat/trust?folder=repo"), ("POST", "/goat/trust"),
                                              ("DELETE", "/goat/trust?folder=repo")])  # fmt: skip
@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_unauthenticated_requests_are_refused(
    server: JupyterServer, method: str, path: str, token: str | None
) -> None:
    reply = server.request(method, path, {"folder": "repo"} if method == "POST" else None, token=token)
    assert reply.status in (401, 403) and store(server) == {}


def test_show_trust_and_revoke_a_folder(server: JupyterServer) -> None:
    shown = server.request("GET", "/goat/trust?folder=repo")
    assert shown.status == 200, shown.raw
    texts = {item["text"]: item["trusted"] for item in shown.body["items"]}
    assert texts == {"MCP server 'evil': runs `touch`": False, "permission mode bypassPermissions": False}
    trusted = server.request("POST", "/goat/trust", {"folder": "repo"})
    assert all(item["trusted"] for item in trusted.body["items"])
    folder = str((server.root / "repo").resolve())
    assert trusted.body["trusted_folders"] == [folder] and list(store(server)) == [folder]
    revoked = server.request("DELETE", f"/goat/trust?folder={folder}")
    assert revoked.status == 200 and revoked.body["trusted_folders"] == [] and store(server) == {}


@pytest.mark.parametrize("folder", ["..", "../..", "/etc", "repo/../..", "missing", 3, None])
def test_folders_outside_the_root_or_missing_are_refused(server: JupyterServer, folder: object) -> None:
    reply = server.request("POST", "/goat/trust", {"folder": folder})
    assert reply.status == 400 and reply.body["errors"][0]["field"] == "folder", reply.raw
    assert store(server) == {}


def test_the_root_itself_can_be_shown(server: JupyterServer) -> None:
    reply = server.request("GET", "/goat/trust")
    assert reply.status == 200 and reply.body["items"] == []
    assert Path(reply.body["folder"]) == server.root.resolve()
