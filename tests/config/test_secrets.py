"""Which values count as secrets, how they are redacted, and that a stream cut anywhere is redacted
exactly like the whole text (hypothesis: random texts built from overlapping values, random cuts)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.config.keys import update_keys
from goat_jupyter.config.secrets import Secrets, StreamRedactor, is_secret_name, known_secrets, redact

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def goat_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "goat-home"
    monkeypatch.setenv("GOAT_HOME", str(home))
    yield home


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_APIKEY", "HF_TOKEN", "GITHUB_TOKEN", "JUPYTER_TOKEN",
     "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "CLIENT_SECRET", "MYSECRETTHING", "DB_PASSWORD",
     "PGPASSWORD", "SMTP_PASSWD", "GEMINI_KEY", "openai_api_key", "TOKEN"],
)  # fmt: skip
def test_names_that_hold_credentials(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_BASE", "AZURE_API_VERSION", "PATH", "HOME", "SSH_AUTH_SOCK", "KEYBOARD_LAYOUT",
     "GOOGLE_APPLICATION_CREDENTIALS", "TOKENIZERS_PARALLELISM", "KEY_FILE", "HF_TOKEN_PATH", "MONKEY"],
)  # fmt: skip
def test_names_that_do_not(name: str) -> None:
    assert not is_secret_name(name)


def test_environment_keys_are_replaced_by_their_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_BASE", "https://api.example.test/v1")
    text = f"OPENAI_API_KEY={KEY}\nOPENAI_API_BASE=https://api.example.test/v1\n{KEY}{KEY}"
    shown = redact(text)
    assert KEY not in shown
    assert shown == (
        "OPENAI_API_KEY=[redacted: OPENAI_API_KEY]\nOPENAI_API_BASE=https://api.example.test/v1\n"
        "[redacted: OPENAI_API_KEY][redacted: OPENAI_API_KEY]"
    )


def test_short_values_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Redacting `test-key` or `1` would wreck ordinary output; keys are longer than 8 characters."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("HF_TOKEN", "12345678")
    assert redact("test-key 12345678 test-keys") == "test-key 12345678 test-keys"
    monkeypatch.setenv("HF_TOKEN", "123456789")
    assert redact("x 123456789 y") == "x [redacted: HF_TOKEN] y"


def test_a_stored_key_not_in_the_environment_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert redact(f"gsk-{KEY}") == f"gsk-{KEY}"
    update_keys({"GROQ_API_KEY": f"gsk-{KEY}", "AZURE_API_BASE": "https://azure.example.test"})
    assert redact(f"key=gsk-{KEY}") == "key=[redacted: GROQ_API_KEY]"
    assert redact("https://azure.example.test") == "https://azure.example.test"  # an endpoint is no secret
    update_keys({"GROQ_API_KEY": None})  # removed in the panel: the cache notices the file changed
    assert redact(f"gsk-{KEY}") == f"gsk-{KEY}"


def test_the_set_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_first_value_123")
    assert redact("hf_first_value_123") == "[redacted: HF_TOKEN]"
    monkeypatch.setenv("HF_TOKEN", "hf_second_value_456")
    assert redact("hf_first_value_123 hf_second_value_456") == "hf_first_value_123 [redacted: HF_TOKEN]"
    assert known_secrets() is known_secrets()  # unchanged: the cached matcher is reused


def test_json_escaped_values_are_found_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session file holds JSON text, where a value with a quote or backslash is escaped."""
    value = 'pa"ss\\word-123'
    monkeypatch.setenv("DB_PASSWORD", value)
    line = json.dumps({"content": f"password is {value}"})
    assert value not in json.loads(redact(line))["content"]
    assert json.loads(redact(line)) == {"content": "password is [redacted: DB_PASSWORD]"}


def test_the_longer_of_two_overlapping_values_wins() -> None:
    secrets = Secrets.of({"A_TOKEN": "abcdefghij", "B_TOKEN": "abcdefghijklmn"})
    assert secrets.redact("abcdefghijklmn abcdefghij!") == "[redacted: B_TOKEN] [redacted: A_TOKEN]!"


def stream(secrets: Secrets, pieces: list[str]) -> str:
    out: list[str] = []
    held = ""
    for piece in pieces:
        shown, held = secrets.let_out(held + piece)
        out.append(shown)
    return "".join(out) + secrets.redact(held)


def cuts(text: str, points: list[int]) -> list[str]:
    edges = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(edges)]


VALUES = st.lists(st.text("abc", min_size=9, max_size=14), min_size=1, max_size=3, unique=True)


@settings(max_examples=400, deadline=None)
@given(values=VALUES, filler=st.lists(st.text("abcx", max_size=6), max_size=8), data=st.data())
def test_a_stream_cut_anywhere_is_redacted_like_the_whole(
    values: list[str], filler: list[str], data: st.DataObject
) -> None:
    secrets = Secrets.of({f"K{i}_TOKEN": v for i, v in enumerate(values)})
    parts = [p for pair in zip(filler, [*values, *values, *values], strict=False) for p in pair]
    text = "".join(parts) + data.draw(st.sampled_from(values))[: data.draw(st.integers(0, 14))]
    points = data.draw(st.lists(st.integers(0, 200), max_size=12))
    assert stream(secrets, cuts(text, points)) == secrets.redact(text)


def test_the_stream_redactor_holds_a_split_key_until_it_is_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    redactor = StreamRedactor()
    shown = [redactor.feed(p) for p in ("OPENAI_API_KEY=sk-te", "st-0123", "456789abcdef\nnext sk")]
    shown.append(redactor.flush())
    assert "".join(shown) == "OPENAI_API_KEY=[redacted: OPENAI_API_KEY]\nnext sk"
    assert all(KEY[:4] not in piece for piece in shown[:2])
    assert shown[0] == "OPENAI_API_KEY="
