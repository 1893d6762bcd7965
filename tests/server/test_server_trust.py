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
    trusted = server.request("POST", "/goat/trust", {"folder": "repo", "digest": shown.body["digest"]})
    assert trusted.status == 200 and all(item["trusted"] for item in trusted.body["items"])
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


@pytest.mark.parametrize("digest", [None, "", "0" * 64, 7])
def test_trust_without_the_digest_of_what_was_shown_trusts_nothing(
    server: JupyterServer, digest: object
) -> None:
    reply = server.request("POST", "/goat/trust", {"folder": "repo", "digest": digest})
    assert reply.status == 409 and reply.body["errors"][0]["field"] == "digest", reply.raw
    assert reply.body["items"] and store(server) == {}


def test_a_file_changed_after_the_panel_showed_it_is_not_trusted_and_the_new_list_comes_back(
    server: JupyterServer,
) -> None:
    repo = server.root / "changing"
    (repo / ".goat").mkdir(parents=True)
    (repo / ".goat/settings.json").write_text(json.dumps({"mcp_servers": {"seen": {"command": "seen"}}}))
    shown = server.request("GET", "/goat/trust?folder=changing")
    assert [item["text"] for item in shown.body["items"]] == ["MCP server 'seen': runs `seen`"]
    (repo / ".goat/settings.json").write_text(json.dumps({"mcp_servers": {"unseen": {"command": "unseen"}}}))
    refused = server.request("POST", "/goat/trust", {"folder": "changing", "digest": shown.body["digest"]})
    assert refused.status == 409 and store(server) == {}
    assert [item["text"] for item in refused.body["items"]] == ["MCP server 'unseen': runs `unseen`"]
    again = server.request("POST", "/goat/trust", {"folder": "changing", "digest": refused.body["digest"]})
    assert again.status == 200 and list(store(server)) == [str(repo.resolve())]
    server.request("DELETE", f"/goat/trust?folder={repo.resolve()}")
