"""llm_tools() goes through litellm unchanged: a real HTTP request to a local OpenAI-compatible server."""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before litellm is imported: no network fetch

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.tools import default_registry

COMPLETION = {
    "id": "chatcmpl-test",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "test-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


class RecordingServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), RecordingHandler)
        self.requests: list[tuple[str, dict[str, Any]]] = []


class RecordingHandler(BaseHTTPRequestHandler):
    """Records each POSTed JSON body and answers with a minimal chat completion."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        assert isinstance(self.server, RecordingServer)
        self.server.requests.append((self.path, json.loads(self.rfile.read(length))))
        payload = json.dumps(COMPLETION).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    httpd = RecordingServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.mark.parametrize("teams", ["0", "1"])
async def test_tools_reach_the_server_intact(
    server: RecordingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teams: str
) -> None:
    import litellm

    monkeypatch.setenv("GOAT_EXPERIMENTAL_AGENT_TEAMS", teams)
    registry = default_registry(cwd=tmp_path)
    tools = registry.llm_tools()
    response = await litellm.acompletion(
        model="openai/test-model",
        api_base=f"http://127.0.0.1:{server.server_address[1]}/v1",
        api_key="x",
        messages=[{"role": "user", "content": "hello"}],
        tools=tools,
    )
    assert response.choices[0].message.content == "ok"  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    assert len(server.requests) == 1
    path, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "test-model"
    assert body["tools"] == tools
    sent_names = [t["function"]["name"] for t in body["tools"]]
    assert sent_names == [t.name for t in registry.tools() if not t.hidden]
    grep = next(t for t in body["tools"] if t["function"]["name"] == "Grep")
    assert {"-A", "-B", "-C", "-n", "-i"} <= set(grep["function"]["parameters"]["properties"])
