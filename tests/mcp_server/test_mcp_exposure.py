"""Who can reach the MCP endpoint: nobody while it is off (404), not without the Jupyter token, not by a
project file turning it on, not when the managed policy forbids it; and what the settings panel's
status shows while it is on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_server.mcp_helpers import call, mcp_client, turn_on
from tests.server_harness import TOKEN, JupyterServer, jupyter_server

pytestmark = [pytest.mark.timeout(180)]

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
}  # fmt: skip


@pytest.fixture(scope="module")
def server_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("off")) as server:
        yield server


def post(server: JupyterServer, path: str, token: str | None = TOKEN) -> int:
    """An MCP initialize request as a client sends it; the HTTP status."""
    request = urllib.request.Request(f"{server.url}{path}", json.dumps(INITIALIZE).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if token is not None:
        request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_off_by_default_the_endpoint_does_not_exist(server_off: JupyterServer) -> None:
    assert post(server_off, "/goat/mcp") == 404
    assert server_off.request("GET", "/goat/mcp").status == 404
    assert server_off.request("GET", "/goat/mcp/tab").status == 404
    status = server_off.request("GET", "/goat/mcp/status").body
    assert status["enabled"] is False and status["commands"] == {}
    assert "off" in status["reason"]


def test_a_project_file_cannot_turn_it_on(server_off: JupyterServer) -> None:
    """The server root's .goat/settings.json (a cloned repository's) is never read for this switch."""
    project = server_off.root / ".goat"
    project.mkdir(exist_ok=True)
    (project / "settings.json").write_text(json.dumps({"mcp_server": {"enabled": True}}))
    (server_off.root / ".claude").mkdir(exist_ok=True)
    (server_off.root / ".claude" / "settings.json").write_text(json.dumps({"mcp_server": {"enabled": True}}))
    assert post(server_off, "/goat/mcp") == 404


def test_the_user_turns_it_on_and_off_without_a_restart(server_off: JupyterServer) -> None:
    turn_on(server_off.home)
    try:
        assert post(server_off, "/goat/mcp") == 200
        assert server_off.request("GET", "/goat/mcp/status").body["enabled"] is True
    finally:
        (server_off.home / ".goat" / "settings.json").write_text(
            json.dumps({"mcp_server": {"enabled": False}})
        )
    assert post(server_off, "/goat/mcp") == 404


def test_settings_spelled_otherwise_do_not_turn_it_on(server_off: JupyterServer) -> None:
    for value in ("true", 1, {"enabled": "true"}, {"enabled": 1}, [True], {"Enabled": True}):
        (server_off.home / ".goat").mkdir(exist_ok=True)
        data = {"mcp_server": value}
        (server_off.home / ".goat" / "settings.json").write_text(json.dumps(data))
        assert post(server_off, "/goat/mcp") == 404, value


@pytest.fixture(scope="module")
def server_on(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("on"), extra_args=("--GoatMcp.enabled=True",)) as server:
        yield server


def test_the_flag_turns_it_on(server_on: JupyterServer) -> None:
    assert post(server_on, "/goat/mcp") == 200
    status = server_on.request("GET", "/goat/mcp/status").body
    assert status["enabled"] is True and "--GoatMcp.enabled=True" in status["reason"]


def test_without_the_token_it_is_refused(server_on: JupyterServer) -> None:
    assert post(server_on, "/goat/mcp", token=None) == 403
    assert post(server_on, "/goat/mcp", token="wrong") == 403
    assert post(server_on, "/goat/mcp?token=wrong", token=None) == 403
    assert server_on.request("GET", "/goat/mcp/status", token=None).status == 403
    assert server_on.request("GET", "/goat/mcp/tab", token=None).status == 403


def test_the_token_in_the_query_is_accepted_like_jupyter_does(server_on: JupyterServer) -> None:
    assert post(server_on, "/goat/mcp?token=goat-test-token", token=None) == 200


def test_the_status_shows_connect_commands_with_the_token(server_on: JupyterServer) -> None:
    commands = server_on.request("GET", "/goat/mcp/status").body["commands"]
    url = f"{server_on.url}/goat/mcp"
    assert commands["claude_code"] == (
        f'claude mcp add --transport http jupyter {url} --header "Authorization: token goat-test-token"'
    )
    assert f'url = "{url}"' in commands["codex"] and "token goat-test-token" in commands["codex"]
    vscode = json.loads(commands["vscode"])["servers"]["jupyter"]
    assert vscode == {"type": "http", "url": url, "headers": {"Authorization": "token goat-test-token"}}


async def test_connected_clients_and_their_calls_are_listed(server_on: JupyterServer) -> None:
    async with mcp_client(server_on, name="claude-code") as session:
        failed, _ = await call(session, "list_notebooks", {})
        assert not failed
        failed, _ = await call(session, "read_notebook", {"notebook_path": "missing.ipynb"})
        assert failed
    clients = server_on.request("GET", "/goat/mcp/status").body["clients"]
    assert {"client": "claude-code", "calls": 1, "recent": ["Read: error"]} in clients


def test_the_managed_policy_forbids_it(tmp_path: Path) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "managed-settings.json").write_text(json.dumps({"disable_mcp_server": True}))
    env = {"GOAT_MANAGED_DIR": str(managed)}
    with jupyter_server(tmp_path, extra_env=env, extra_args=("--GoatMcp.enabled=True",)) as server:
        turn_on(server.home)
        assert post(server, "/goat/mcp") == 404
        status = server.request("GET", "/goat/mcp/status").body
        assert status["enabled"] is False and "managed policy" in status["reason"]


def test_the_panel_switch_writes_only_the_users_file(server_off: JupyterServer) -> None:
    settings = server_off.home / ".goat" / "settings.json"
    settings.write_text(json.dumps({"model": "openai/gpt-4o-mini", "permissions": {"deny": ["Bash"]}}))
    reply = server_off.request("PUT", "/goat/mcp/status", {"enabled": True})
    assert reply.status == 200 and reply.body["enabled"] is True
    assert json.loads(settings.read_text()) == {
        "model": "openai/gpt-4o-mini",
        "permissions": {"deny": ["Bash"]},
        "mcp_server": {"enabled": True},
    }
    assert post(server_off, "/goat/mcp") == 200
    assert server_off.request("PUT", "/goat/mcp/status", {"enabled": False}).body["enabled"] is False
    assert post(server_off, "/goat/mcp") == 404


def test_the_panel_switch_refuses_bad_input_and_keeps_a_broken_file(server_off: JupyterServer) -> None:
    settings = server_off.home / ".goat" / "settings.json"
    for body in ({"enabled": "true"}, {"enabled": 1}, {}, {"on": True}):
        assert server_off.request("PUT", "/goat/mcp/status", body).status == 400
    assert server_off.request("PUT", "/goat/mcp/status", content=b"[true]").status == 400
    settings.write_text("{not json")
    assert server_off.request("PUT", "/goat/mcp/status", {"enabled": True}).status == 409
    assert settings.read_text() == "{not json"
    settings.write_text("[1, 2]")
    assert server_off.request("PUT", "/goat/mcp/status", {"enabled": True}).status == 409
    assert settings.read_text() == "[1, 2]"
    assert post(server_off, "/goat/mcp") == 404
    assert server_off.request("PUT", "/goat/mcp/status", {"enabled": True}, token=None).status == 403
