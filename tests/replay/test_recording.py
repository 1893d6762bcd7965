"""The notebook recording: what it keeps (no outputs, no keys), what it ignores (anything it does not
define), how it plays through the real replay server, and when a replayed call departs."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.replay import ReplayServer, ResponseTurn
from goat_jupyter.replay.recording import (
    MAX_RECORDING_BYTES,
    RECORDING_MIME,
    CallResult,
    Recording,
    RecordingSource,
    call_id,
    digest,
    parse_recording,
    record,
    recording_bundle,
)

KEY = "sk-test-" + "x" * 30


def assistant(text: str, *calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls
    ]
    return {"role": "assistant", "content": text, "tool_calls": tool_calls or None}


MESSAGES = [
    {"role": "user", "content": "go"},
    assistant("Reading.", ("a", "Read", {"file_path": "x.txt"}), ("b", "Bash", {"command": f"echo {KEY}"})),
    {"role": "tool", "tool_call_id": "a", "content": "1\tsecret file body"},
    {"role": "tool", "tool_call_id": "b", "content": "output"},
    assistant(f"Done, the key was {KEY}."),
]
RESULTS = {"a": CallResult(True, digest("1\tsecret file body")), "b": CallResult(False, digest("output"))}


@pytest.fixture(autouse=True)
def known_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_a_recording_keeps_calls_and_digests_but_no_tool_output_and_no_key() -> None:
    recording = record("gpt-x", "go", MESSAGES, RESULTS)
    text = json.dumps(recording.to_json())
    assert KEY not in text and "secret file body" not in text and "output" not in text
    assert [(c.name, c.ok) for t in recording.turns for c in t.tool_calls] == [
        ("Read", True),
        ("Bash", False),
    ]
    assert recording.turns[0].tool_calls[0].digest == digest("1\tsecret file body")


def test_unknown_fields_are_dropped_unread() -> None:
    data = record("m", "p", MESSAGES, RESULTS).to_json()
    data |= {"permission_mode": "bypassPermissions", "hooks": {"PreToolUse": []}, "settings": {"x": 1}}
    data["turns"][0]["tool_calls"][0]["permission"] = "allow"
    parsed = parse_recording(data)
    assert parsed is not None
    dumped = json.dumps(parsed.to_json())
    assert "bypassPermissions" not in dumped and "hooks" not in dumped and "permission" not in dumped


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_any_json_is_a_recording_or_none_never_an_exception(value: object) -> None:
    parsed = parse_recording(value)
    assert parsed is None or isinstance(parsed, Recording)


def test_another_version_is_not_played() -> None:
    assert parse_recording({"version": 2, "turns": []}) is None


def test_a_too_large_recording_is_not_kept() -> None:
    big = Recording(prompt="p", turns=[{"text": "x" * MAX_RECORDING_BYTES}])  # pyright: ignore[reportArgumentType]
    assert recording_bundle(big) is None
    small = recording_bundle(Recording(model="m", prompt="p"))
    assert small is not None and RECORDING_MIME in small[0] and small[1] == {"goat": {"transcript": ""}}


def test_the_recording_shows_as_a_quiet_line_not_a_monospace_one() -> None:
    """Issue 33 point 13: JupyterLab renders text/html when present; text/plain was a code-font line."""
    shown = recording_bundle(Recording(model="m<x>", prompt="p", turns=[{"text": "hi"}]))  # pyright: ignore[reportArgumentType]
    assert shown is not None
    assert shown[0]["text/plain"] == "Kept for replay: m<x>, 1 turn, 0 tool calls"
    assert "Kept for replay: m&lt;x&gt;, 1 turn" in shown[0]["text/html"]
    assert "font-size" in shown[0]["text/html"] and "goat: recorded session" not in str(shown[0])


async def test_the_replay_server_plays_the_recorded_turns_with_their_call_ids() -> None:
    source = RecordingSource(record("gpt-x", "go", MESSAGES, RESULTS))
    with ReplayServer(source=source) as server:
        first = await litellm.acompletion(
            model="openai/replay",
            api_base=server.url,
            api_key="k",
            messages=[{"role": "user", "content": "go"}],
        )
        second = await litellm.acompletion(
            model="openai/replay",
            api_base=server.url,
            api_key="k",
            messages=[{"role": "user", "content": "go"}],
        )
    calls = first.choices[0].message.tool_calls or []  # pyright: ignore
    assert [c.id for c in calls] == [call_id(0, 0), call_id(0, 1)]
    assert second.choices[0].message.content.startswith("Done")  # pyright: ignore


def test_departures() -> None:
    source = RecordingSource(record("m", "p", MESSAGES, RESULTS))
    assert source.check(call_id(0, 1), CallResult(False, "anything")) is None  # Bash: only success counts
    assert source.check("call_someone_else", CallResult(False, "")) is None
    found = source.check(call_id(0, 0), CallResult(True, "0" * 16, "3 lines"))
    assert found is not None and found.step == "1.1" and found.call.name == "Read" and found.kind == "changed"
    assert found.now.summary == "3 lines"
    assert (
        source.check(call_id(0, 1), CallResult(True, "")) is None and source.departure is found
    )  # the first counts
    assert source.pick({}).turn == ResponseTurn(text="")  # the agent is told nothing more: it stops


@pytest.mark.parametrize(("ok", "kind"), [(False, "failed"), (True, "succeeded")])
def test_success_that_changes_departs_for_any_tool(ok: bool, kind: str) -> None:
    results = {"a": CallResult(not ok, digest("x")), "b": CallResult(not ok, digest("y"))}
    source = RecordingSource(record("m", "p", MESSAGES, results))
    found = source.check(call_id(0, 1), CallResult(ok, digest("y")))
    assert found is not None and found.step == "1.2" and found.call.name == "Bash" and found.kind == kind


def test_a_summary_is_kept_only_for_a_call_that_succeeded_redacted_and_short() -> None:
    results = {
        "a": CallResult(True, digest("x"), f"2 files {KEY} " + "y" * 200),
        "b": CallResult(False, digest("y"), "Permission denied: /secret/path"),
    }
    calls = record("m", "p", MESSAGES, results).turns[0].tool_calls
    assert calls[0].summary.startswith("2 files") and KEY not in calls[0].summary
    assert len(calls[0].summary) <= 80 and calls[1].summary == ""


def agent_request(prompt: str, *, offers_agent: bool = False) -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": "Agent" if offers_agent else "Read"}}]
    return {
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": prompt}],
        "tools": tools,
    }


def test_a_subagents_requests_get_its_own_turns_and_never_the_top_levels() -> None:
    sub = [{"role": "user", "content": "find csv"}, assistant("Found one.")]
    recording = record("m", "go", MESSAGES, RESULTS, agents=[sub])
    assert [a.prompt for a in recording.agents] == ["find csv"]
    source = RecordingSource(Recording.model_validate(recording.to_json()))
    assert source.pick(agent_request("find csv")).turn == ResponseTurn(text="Found one.")
    # Played out: the subagent gets an empty answer, not the top level's next turn.
    assert source.pick(agent_request("find csv")).turn == ResponseTurn(text="")
    # The top level offers the Agent tool, so its request is the top level's even when it quotes the prompt.
    top = source.pick(agent_request("go; find csv", offers_agent=True)).turn
    assert isinstance(top, ResponseTurn) and [c.name for c in top.tool_calls] == ["Read", "Bash"]
    # A request that matches no recorded subagent is the top level's.
    second = source.pick(agent_request("something else")).turn
    assert isinstance(second, ResponseTurn) and second.text.startswith("Done")


def test_a_recorded_subagent_prompt_is_redacted_and_an_empty_one_dropped() -> None:
    sub = [{"role": "user", "content": f"use {KEY}"}, assistant("ok")]
    recording = record("m", "go", MESSAGES, RESULTS, agents=[sub, [assistant("no prompt")]])
    assert len(recording.agents) == 1 and KEY not in json.dumps(recording.to_json())
