"""The settings panel's endpoints on a real jupyter server: authentication, validation, the key
store (mode 0600, values never returned), kernels started afterwards seeing the keys."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server_harness import JupyterServer, jupyter_server

pytestmark = pytest.mark.timeout(300)
SECRET = "sk-test-SECRET-value-123"
ENDPOINTS = [("GET", "/goat/settings"), ("PUT", "/goat/settings"), ("GET", "/goat/keys"),
             ("PUT", "/goat/keys"), ("GET", "/goat/models"), ("POST", "/goat/mcp/test")]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as running:
        yield running


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
@pytest.mark.parametrize("token", [None, "wrong-token", ""])
def test_unauthenticated_requests_are_refused(
    server: JupyterServer, method: str, path: str, token: str | None
) -> None:
    body = {"set": {"OPENAI_API_KEY": "sk-evil"}, "model": "evil"} if method != "GET" else None
    reply = server.request(method, path, body, token=token)
    assert reply.status in (401, 403), (reply.status, reply.raw)
    assert (
        not (server.home / ".goat" / "keys.json").exists()
        or "sk-evil" not in (server.home / ".goat" / "keys.json").read_text()
    )
    assert "evil" not in json.dumps(server.request("GET", "/goat/settings").body)


def test_keys_are_stored_user_only_and_their_values_never_returned(server: JupyterServer) -> None:
    reply = server.request(
        "PUT", "/goat/keys", {"set": {"OPENAI_API_KEY": SECRET, "GROQ_API_KEY": SECRET + "2"}}
    )
    assert reply.status == 200, reply.raw
    assert [k["name"] for k in reply.body["keys"]] == ["GROQ_API_KEY", "OPENAI_API_KEY"]
    key_file = server.home / ".goat" / "keys.json"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert json.loads(key_file.read_text())["OPENAI_API_KEY"] == SECRET
    for path in ("/goat/keys", "/goat/settings", "/goat/models"):
        answer = server.request("GET", path)
        assert answer.status == 200 and SECRET not in answer.raw, path
    models = server.request("GET", "/goat/models").body
    assert {"id": "gpt-4o-mini", "provider": "openai"} in models["models"]
    openai = next(p for p in models["providers"] if p["provider"] == "openai")
    assert openai["key_present"] is True
    anthropic = next(p for p in models["providers"] if p["provider"] == "anthropic")
    assert anthropic["key_present"] is False and "ANTHROPIC_API_KEY" in anthropic["missing"]
    removed = server.request("PUT", "/goat/keys", {"remove": ["GROQ_API_KEY"]})
    assert [k["name"] for k in removed.body["keys"]] == ["OPENAI_API_KEY"]


@pytest.mark.parametrize(
    "body",
    [{"set": {"PATH": "/evil"}}, {"set": {"LD_PRELOAD": "x.so"}}, {"set": {"OPENAI_API_KEY": "a\nb"}},
     {"set": {"OPENAI_API_KEY": 5}}, {"set": []}, {"remove": "OPENAI_API_KEY"}],
)  # fmt: skip
def test_bad_key_updates_are_refused_and_change_nothing(server: JupyterServer, body: object) -> None:
    before = server.request("GET", "/goat/keys").body
    reply = server.request("PUT", "/goat/keys", body)
    assert reply.status == 400, reply.raw
    assert server.request("GET", "/goat/keys").body == before


def test_settings_round_trip_keeps_other_keys(server: JupyterServer) -> None:
    path = server.home / ".goat" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"max_turns": 7, "permissions": {"defaultMode": "plan", "deny": ["Glob"]}}))
    update = {"model": "anthropic/claude-sonnet-4-5", "permission_mode": "acceptEdits",
              "permissions": {"deny": ["Read(./secret.txt)", "Bash(rm:*)"], "allow": [], "ask": ["WebFetch"]}}  # fmt: skip
    reply = server.request("PUT", "/goat/settings", update)
    assert reply.status == 200, reply.raw
    saved = json.loads(path.read_text())
    assert saved["max_turns"] == 7 and saved["permissions"]["defaultMode"] == "plan"
    assert saved["permissions"]["deny"] == ["Read(./secret.txt)", "Bash(rm:*)"]
    view = server.request("GET", "/goat/settings").body
    assert view["model"] == "anthropic/claude-sonnet-4-5" and view["permission_mode"] == "acceptEdits"


@pytest.mark.parametrize(
    ("update", "field"),
    [({"permissions": {"deny": ["Read(./ok)", "Bash(unclosed"]}}, "permissions.deny"),
     ({"permissions": {"allow": [""]}}, "permissions.allow"),
     ({"permissions": {"allow": [3]}}, "permissions.allow"),
     ({"permissions": {"sometimes": []}}, "permissions.sometimes"),
     ({"permission_mode": "yolo"}, "permission_mode"),
     ({"model": 5}, "model"), ({"model": "gpt 4"}, "model"),
     ({"mcpServers": {"x": {"type": "http", "url": "ftp://x"}}}, "mcpServers"),
     ({"mcpServers": {"x": {"command": ""}}}, "mcpServers"),
     ({"autoload": "yes"}, "autoload"), ({"unknown": 1}, "unknown")],
)  # fmt: skip
def test_invalid_settings_are_reported_per_field_and_not_saved(
    server: JupyterServer, update: dict[str, object], field: str
) -> None:
    path = server.home / ".goat" / "settings.json"
    before = path.read_bytes() if path.exists() else None
    reply = server.request("PUT", "/goat/settings", update)
    assert reply.status == 400, reply.raw
    assert field in [problem["field"] for problem in reply.body["errors"]]
    assert (path.read_bytes() if path.exists() else None) == before


def test_a_broken_settings_file_is_not_overwritten(server: JupyterServer) -> None:
    path = server.home / ".goat" / "settings.json"
    saved = path.read_bytes() if path.exists() else None
    path.write_text("{ not json")
    try:
        assert server.request("PUT", "/goat/settings", {"model": "gpt-4o"}).status == 409
        assert path.read_text() == "{ not json"
    finally:
        path.unlink()
        if saved is not None:
            path.write_bytes(saved)


def test_autoload_from_the_panel_round_trips(server: JupyterServer) -> None:
    config = server.home / ".ipython" / "profile_default" / "ipython_kernel_config.py"
    assert server.request("PUT", "/goat/settings", {"autoload": True}).body["autoload"] is True
    assert "goat_jupyter" in config.read_text()
    assert server.request("PUT", "/goat/settings", {"autoload": False}).body["autoload"] is False
    assert not config.exists()


def test_mcp_test_connection(server: JupyterServer) -> None:
    demo = str(Path(__file__).parents[1] / "mcp" / "demo_server.py")
    good = server.request(
        "POST", "/goat/mcp/test", {"name": "demo", "server": {"command": sys.executable, "args": [demo]}}
    )
    assert good.status == 200 and good.body["ok"] is True and good.body["tools"], good.raw
    bad = server.request("POST", "/goat/mcp/test", {"name": "x", "server": {"command": "/no/such/binary"}})
    assert bad.body["ok"] is False and "not found" in bad.body["error"]
    invalid = server.request(
        "POST", "/goat/mcp/test", {"name": "x", "server": {"type": "http", "url": "nope"}}
    )
    assert invalid.body["ok"] is False and "invalid" in invalid.body["error"]


def run_in(client: object, code: str) -> str:
    """Execute in a kernel through a BlockingKernelClient; the stream output."""
    from jupyter_client.blocking.client import BlockingKernelClient

    assert isinstance(client, BlockingKernelClient)
    out: list[str] = []

    def collect(msg: dict[str, object]) -> None:
        content = msg["content"]
        if msg["msg_type"] == "stream" and isinstance(content, dict):
            out.append(str(content["text"]))  # pyright: ignore[reportUnknownArgumentType]

    client.execute_interactive(code, output_hook=collect, timeout=120)
    return "".join(out)


def test_kernels_started_after_saving_see_the_keys_and_running_ones_reload(server: JupyterServer) -> None:
    from jupyter_client.blocking.client import BlockingKernelClient

    assert server.request("PUT", "/goat/keys", {"set": {"MISTRAL_API_KEY": "first"}}).status == 200
    kernel = server.request("POST", "/api/kernels", {"name": "python3"}).body
    client = BlockingKernelClient(
        connection_file=str(server.home / "runtime" / f"kernel-{kernel['id']}.json")
    )
    client.load_connection_file()
    client.start_channels(hb=False)  # no heartbeat: a client without a manager reads a late one as dead
    try:
        client.wait_for_ready(timeout=60)
        assert run_in(client, "import os; print(os.environ.get('MISTRAL_API_KEY'))").strip() == "first"
        server.request("PUT", "/goat/keys", {"set": {"MISTRAL_API_KEY": "second"}})
        server.request("PUT", "/goat/settings", {"model": "mistral/mistral-small"})
        reloaded = run_in(client, "%load_ext goat_jupyter\n%goat config reload")
        assert (
            "mistral/mistral-small" in reloaded and "MISTRAL_API_KEY" in reloaded and "second" not in reloaded
        )
        assert "Keys from ~/.goat/keys.json: MISTRAL_API_KEY" in reloaded, "a path under home, as ~"
        assert run_in(client, "print(os.environ.get('MISTRAL_API_KEY'))").strip() == "second"
        server.request("PUT", "/goat/keys", {"remove": ["MISTRAL_API_KEY"]})
        run_in(client, "%goat config reload")
        assert run_in(client, "print(os.environ.get('MISTRAL_API_KEY'))").strip() == "None"
    finally:
        client.stop_channels()
        server.request("DELETE", f"/api/kernels/{kernel['id']}")
