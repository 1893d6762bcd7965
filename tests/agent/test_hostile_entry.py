"""Where the model's output and untrusted JSON enter goat (issue 32, points 10, 11, 13): random JSON-ish
text with lone surrogates and deep nesting through the entry functions never raises anything but
ValueError, and what comes out always encodes as UTF-8 and parses within the nesting bound."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.agent.prompts import session_context
from goat_jupyter.agent.text_calls import recover_call
from goat_jupyter.agent.turns import AssistantTurn, ToolCallAccumulator, absorb, clean_arguments
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.replay.recording import record
from goat_jupyter.settings import load_settings
from goat_jupyter.state import SessionState
from goat_jupyter.text import MAX_JSON_DEPTH, JsonTooDeepError, loads_json
from goat_jupyter.tools.runner import parse_arguments

SURROGATES = st.sampled_from(["\ud800", "\udfff", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\\\ud800"])
PIECES = st.one_of(
    SURROGATES,
    st.sampled_from(
        ['{"a": ', "[", "]", "{", "}", '"', ",", ":", "1", "null", '"x"', "\\", "```json\n", "<tool_call>"]
    ),
    st.text(max_size=4),
)
JSONISH = st.lists(PIECES, max_size=40).map("".join)


def deep(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def encodes(text: str) -> bool:
    text.encode("utf-8")
    return True


@settings(max_examples=300, deadline=None)
@given(JSONISH, st.integers(0, 3000))
def test_random_arguments_enter_clean_and_bounded(text: str, levels: int) -> None:
    for raw in (text, deep(levels, text or "1"), '{"command": ' + deep(levels, json.dumps(text)) + "}"):
        cleaned = clean_arguments(raw)
        assert encodes(cleaned)
        try:
            value = parse_arguments(cleaned)
        except InvalidInputError:
            continue  # not JSON, not an object, or too deep: an error result for the model
        assert encodes(json.dumps(value, ensure_ascii=False))


@settings(max_examples=200, deadline=None)
@given(
    JSONISH, st.integers(0, 3000), st.sampled_from(["```json\n{}\n```", "<tool_call>{}</tool_call>", "{}"])
)
def test_random_text_tool_calls_enter_clean_and_bounded(text: str, levels: int, shape: str) -> None:
    body = '{"name": "Bash", "arguments": {"command": ' + deep(levels, json.dumps(text)) + "}}"
    for reply in (text, shape.replace("{}", body), shape.replace("{}", text)):
        call = recover_call(reply, {"Bash"})
        if call is not None:
            assert encodes(call.arguments) and isinstance(parse_arguments(call.arguments), dict)


def chunk(content: Any = None, calls: list[Any] | None = None, usage: Any = None, finish: Any = None) -> Any:
    delta = SimpleNamespace(content=content, tool_calls=calls)
    return SimpleNamespace(usage=usage, choices=[SimpleNamespace(delta=delta, finish_reason=finish)])


def call_delta(index: int, name: Any, arguments: Any, call_id: Any = "c1") -> Any:
    return SimpleNamespace(index=index, id=call_id, function=SimpleNamespace(name=name, arguments=arguments))


@settings(max_examples=200, deadline=None)
@given(JSONISH, JSONISH, st.one_of(st.integers(-5, 10**6), st.floats(), st.text(max_size=3), st.none()))
def test_every_field_of_a_streamed_turn_enters_clean(text: str, arguments: str, count: Any) -> None:
    """Text, tool-call ids, names and arguments, usage and the finish reason: a turn built from any of
    them records, saves and sends as UTF-8 (the recording is where the hidden check crashed)."""
    turn, calls, parts = AssistantTurn(), ToolCallAccumulator(), list[str]()
    usage = SimpleNamespace(prompt_tokens=count, completion_tokens=count, cache_creation_input_tokens=count)
    deltas = [call_delta(0, "Ba\udc00sh" + text, arguments, "id\ud800"), call_delta(1, "TodoWrite", "{}")]
    for piece in (chunk(text), chunk(calls=deltas), chunk(usage=usage, finish="stop\udfff" + text)):
        absorb(piece, turn, calls, parts, lambda _text: None)
    turn.tool_calls = calls.result()
    assert turn.usage.prompt_tokens >= 0 and turn.usage.cached_tokens >= 0
    message = {
        "role": "assistant",
        "content": "".join(parts),
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ],
    }
    recording = record("m", "p", [message], {})
    assert encodes(json.dumps(recording.to_json(), ensure_ascii=False) + str(turn.finish_reason))
    assert encodes(json.dumps(message, ensure_ascii=False))


def test_the_nesting_bound_is_exact_and_ignores_brackets_in_strings() -> None:
    assert loads_json(deep(MAX_JSON_DEPTH)) is not None
    with pytest.raises(JsonTooDeepError, match="nested more than 200 levels"):
        loads_json(deep(MAX_JSON_DEPTH + 1))
    assert loads_json(json.dumps({"a": "[" * 10_000, "b": '\\"' + "{" * 5000})) is not None
    with pytest.raises(ValueError):  # callers that refuse bad JSON refuse this too
        loads_json(b"{" * 10_000)


def test_deep_settings_and_instruction_files_neither_crash_nor_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-fake-Zx9Cv8Bn7Mm6Ll5Kk4Jj3"
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STAGING_API_TOKEN", key)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(deep(10_000))
    (tmp_path / ".goat").mkdir()
    (tmp_path / ".goat" / "settings.json").write_text('{"max_turns": ' + deep(10_000) + "}")
    assert load_settings(tmp_path).max_turns == load_settings(tmp_path / "nowhere").max_turns
    (tmp_path / "AGENTS.md").write_text(f"Deploy with {key}.\n")
    (tmp_path / key).mkdir()
    for folder in (tmp_path, tmp_path / key):
        context = session_context(SessionState(workspace=folder, cwd=folder))
        assert key not in context and "[redacted: STAGING_API_TOKEN]" in context
