"""The settings panel's endpoints on a real jupyter server answer every body they cannot take with
HTTP 400 and a message saying why (never 500), and change nothing: malformed JSON, JSON that is not
an object, JSON nested too deep for the parser or for the steps after it, text with lone surrogates."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server_harness import JupyterServer, jupyter_server

pytestmark = pytest.mark.timeout(300)
WRITERS = [("PUT", "/goat/settings"), ("PUT", "/goat/keys"), ("POST", "/goat/mcp/test")]


def nested(depth: int, leaf: str = "1") -> bytes:
    return ('{"model":' * depth + leaf + "}" * depth).encode()


BODIES = {
    "deep object (parser recursion)": nested(100_000),
    "deep array (parser recursion)": b"[" * 100_000 + b"]" * 100_000,
    "deep array inside an object": b'{"permissions":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    "33 levels (parses, too deep for later steps)": nested(33),
    "deep rules list": b'{"permissions": {"allow": ' + b"[" * 40 + b"]" * 40 + b"}}",
    "array": b"[1, 2]",
    "string": b'"settings"',
    "number": b"5",
    "null": b"null",
    "malformed": b'{"model": "gpt-4o"',
    "trailing garbage": b'{"model": "gpt-4o"} x',
    "invalid UTF-8": b'{"model": "\xff\xfe"}',
    "lone surrogate in a value": b'{"model": "gpt\\ud800", "set": {"OPENAI_API_KEY": "sk-\\udfff-abcdef"}}',
    "lone surrogate in a name": b'{"\\ud800": 1}',
    "NaN": b'{"model": NaN}',
}
EXPECTED = {
    "deep": "nests deeper than",
    "33 levels": "nests deeper than",
    "lone surrogate": "lone surrogate",
    "array": "JSON object",
    "string": "JSON object",
    "number": "JSON object",
    "null": "JSON object",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as running:
        yield running


def stored(server: JupyterServer) -> tuple[bytes | None, bytes | None]:
    files = (server.home / ".goat" / "settings.json", server.home / ".goat" / "keys.json")
    return tuple(path.read_bytes() if path.exists() else None for path in files)  # pyright: ignore[reportReturnType]


@pytest.mark.parametrize(("method", "path"), WRITERS)
@pytest.mark.parametrize("case", list(BODIES))
def test_unusable_bodies_are_answered_400_with_the_reason(
    server: JupyterServer, method: str, path: str, case: str
) -> None:
    before = stored(server)
    reply = server.request(method, path, content=BODIES[case])
    assert reply.status == 400, (case, reply.status, reply.raw[:300])
    message = reply.body["message"]
    expected = next((text for key, text in EXPECTED.items() if case.startswith(key)), "")
    assert expected in message, (case, message)
    assert "Unhandled" not in message and "Traceback" not in reply.raw
    assert stored(server) == before
    assert server.request("GET", "/goat/settings").status == 200  # the server is fine afterwards


def test_nan_is_not_written_into_the_settings_file(server: JupyterServer) -> None:
    """json.loads takes NaN, and a settings file holding it would not be JSON for other readers."""
    reply = server.request("PUT", "/goat/settings", content=b'{"permissions": {"allow": [NaN]}}')
    assert reply.status == 400, reply.raw
    settings_file = server.home / ".goat" / "settings.json"
    assert not settings_file.exists() or "NaN" not in settings_file.read_text()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)
PANEL_KEYS = st.sampled_from(["model", "small_model", "permission_mode", "permissions", "autoload", "x"])
PANEL_BODIES = st.dictionaries(PANEL_KEYS, JSON_VALUES, max_size=4).map(lambda d: json.dumps(d).encode())


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.binary(max_size=200) | PANEL_BODIES | JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    path=st.sampled_from(["/goat/settings", "/goat/keys"]),
)
def test_no_body_makes_a_settings_endpoint_fail(server: JupyterServer, body: bytes, path: str) -> None:
    reply = server.request("PUT", path, content=body)
    assert reply.status in (200, 400, 409), (body[:200], reply.status, reply.raw[:300])
    for written in stored(server):
        if written is not None:
            json.loads(written)  # whatever was accepted left a file other readers can parse
