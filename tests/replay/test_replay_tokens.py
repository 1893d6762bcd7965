"""Cassette token counts: a count far from what the request holds is caught, and recounting fixes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import (
    REQUEST_LOG_ENV,
    ResponseTurn,
    load_cassette,
    save_cassette,
    start_replay,
    to_cassette,
)
from goat_jupyter.replay.tokens import off_counts, prompt_tokens, read_log, update_cassette
from goat_jupyter.tools import default_registry

TOOLS = default_registry(cwd="/tmp").llm_tools()


def request(user: str) -> dict[str, Any]:
    messages = [{"role": "system", "content": "You are goat."}, {"role": "user", "content": user}]
    return {"model": "replay", "messages": messages, "tools": TOOLS}


def test_prompt_tokens_count_the_tool_definitions_and_history() -> None:
    bare = prompt_tokens({"messages": request("hi")["messages"]})
    with_tools = prompt_tokens(request("hi"))
    longer = prompt_tokens(request("hi " * 500))
    assert with_tools > bare + 1_000, "tool definitions are most of a first request"
    assert longer - with_tools >= 450


def test_invented_counts_are_caught_and_recounting_fixes_them(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    save_cassette(
        to_cassette([{"text": "Hello.", "usage": {"prompt_tokens": 2800, "completion_tokens": 5}}]), path
    )
    entries = [{"cassette": str(path), "turn": 0, "request": request("Say hello.")}]
    [problem] = off_counts(load_cassette(path), entries)
    assert problem.startswith("turn 0: recorded 2800 prompt tokens, the request holds ")
    assert update_cassette(path, entries) == 1
    fixed = load_cassette(path)
    assert off_counts(fixed, entries) == []
    turn = fixed.turns[0]
    assert isinstance(turn, ResponseTurn)
    assert turn.usage is not None and turn.usage.prompt_tokens == prompt_tokens(entries[0]["request"])
    assert 0.3 < turn.delay_s < 2 and turn.chunk_delay_s > 0, "a realistic pace comes with the counts"


def test_a_turn_played_headless_and_in_jupyterlab_records_the_mean(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    save_cassette(to_cassette([{"text": "Hello."}]), path)
    headless = {"turn": 0, "request": request("Read: the file, no outputs. " * 20)}
    browser = {"turn": 0, "request": request("Read: the live notebook, its outputs. " * 24)}
    assert update_cassette(path, [headless, browser]) == 1
    turn = load_cassette(path).turns[0]
    assert isinstance(turn, ResponseTurn) and turn.usage is not None
    counts = [prompt_tokens(headless["request"]), prompt_tokens(browser["request"])]
    assert turn.usage.prompt_tokens == round(sum(counts) / 2)
    assert off_counts(load_cassette(path), [headless, browser]) == []


def test_missing_usage_counts_as_off(tmp_path: Path) -> None:
    cassette = to_cassette([{"text": "no usage here"}])
    assert off_counts(cassette, [{"turn": 0, "request": request("x")}])[0].startswith("turn 0: recorded None")


@pytest.mark.parametrize("user", ["first question", 'ünïcode ✓ and "quotes"'])
def test_start_replay_logs_each_request_with_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str
) -> None:
    import httpx

    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(REQUEST_LOG_ENV, str(log))
    path = tmp_path / "c.json"
    save_cassette(to_cassette([{"match": "never", "text": "no"}, {"text": "yes"}]), path)
    server = start_replay(path, set_env=False)
    try:
        body = request(user)
        reply = httpx.post(f"{server.url}/chat/completions", json=body, timeout=10)
        assert reply.status_code == 200
    finally:
        server.stop()
    [entry] = list(read_log(log))
    assert entry["turn"] == 1 and entry["cassette"] == str(path.resolve())
    assert json.dumps(entry["request"]) == json.dumps(body)
