"""The replay server over real HTTP: litellm streams, errors, matching, recording, wire format, CLI."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is first imported

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litellm.exceptions import BadRequestError, InternalServerError, RateLimitError

import goat_jupyter
from goat_jupyter.replay import (
    Cassette,
    ReplayServer,
    ResponseTurn,
    load_cassette,
    save_cassette,
    start_replay,
    to_cassette,
)
from goat_jupyter.replay.__main__ import build_server
from goat_jupyter.replay.recorder import record_server
from tests.replay_helpers import (
    ServerFactory,
    collect_stream,
    error_turn,
    litellm_kwargs,
    llm_call,
    rebuild_stream,
    replay_servers,
    text_turn,
    tool_turn,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def replay_server() -> Iterator[ServerFactory]:
    with replay_servers() as start:
        yield start


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


async def stream(server: ReplayServer, text: str = "hi", **extra: Any):
    response = await llm_call(
        messages=user(text), stream=True, tools=TOOLS, **litellm_kwargs(server, **extra)
    )
    return await collect_stream(response)


@pytest.mark.parametrize("chunk_delay_s", [0.0, 0.001])
async def test_streamed_text_arrives_in_several_chunks_and_reassembles(
    replay_server: ServerFactory, chunk_delay_s: float
) -> None:
    text = "The three worst months were March, June and October."
    server = replay_server([text_turn(text, chunk_delay_s=chunk_delay_s)])
    result = await stream(server)
    assert result.text == text
    assert len(result.text_pieces) > 3
    assert result.finish_reason == "stop"


async def test_tool_call_arguments_split_across_chunks_reassemble(replay_server: ServerFactory) -> None:
    arguments = {"file_path": "/tmp/sales data.csv", "offset": 10, "limit": 200}
    server = replay_server([tool_turn("Read", arguments, text="Let me read it.")])
    result = await stream(server)
    assert result.text == "Let me read it."
    assert result.argument_pieces > 1
    call = result.tool_calls[0]
    assert call["name"] == "Read"
    assert call["id"].startswith("call_")
    assert json.loads(call["arguments"]) == arguments
    assert result.finish_reason == "tool_calls"


async def test_stream_chunk_builder_rebuilds_two_tool_calls(replay_server: ServerFactory) -> None:
    turn = {
        "tool_calls": [
            {"id": "call_a", "name": "Read", "arguments": {"file_path": "/a.txt"}},
            {"id": "call_b", "name": "Glob", "arguments": {"pattern": "**/*.py"}},
        ]
    }
    server = replay_server([turn])
    response = await llm_call(messages=user("go"), stream=True, **litellm_kwargs(server))
    chunks = [chunk async for chunk in response]
    message = rebuild_stream(chunks).choices[0].message
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert calls == [("call_a", "Read", {"file_path": "/a.txt"}), ("call_b", "Glob", {"pattern": "**/*.py"})]


async def test_malformed_argument_string_arrives_exactly_as_given(replay_server: ServerFactory) -> None:
    raw = '{"file_path": "/tmp/a.txt", "limit": 5'
    server = replay_server([tool_turn("Read", raw)])
    result = await stream(server)
    assert result.tool_calls[0]["arguments"] == raw


async def test_rate_limit_turn_raises_rate_limit_error(replay_server: ServerFactory) -> None:
    server = replay_server([error_turn(429, "slow down please"), text_turn("recovered")])
    with pytest.raises(RateLimitError, match="slow down please"):
        await stream(server)
    assert (await stream(server)).text == "recovered"


async def test_server_error_turn_raises_internal_server_error(replay_server: ServerFactory) -> None:
    server = replay_server([error_turn(500, "upstream exploded")])
    with pytest.raises(InternalServerError, match="upstream exploded"):
        await stream(server)


async def test_cut_stream_breaks_the_client_stream_and_next_turn_works(replay_server: ServerFactory) -> None:
    server = replay_server(
        [{"text": "This answer stops half way", "cut_stream": True}, text_turn("Full answer.")]
    )
    response = await llm_call(messages=user("hi"), stream=True, **litellm_kwargs(server))
    received: list[str] = []
    with pytest.raises(Exception, match=r"(?i)connection|payload|incomplete|transfer"):
        async for chunk in response:
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) in "This answer stops half way"
    assert (await stream(server)).text == "Full answer."


async def test_match_lets_concurrent_requests_find_their_own_turns(replay_server: ServerFactory) -> None:
    server = replay_server(
        [
            text_turn("answer for beta", match="task beta", delay_s=0.05),
            text_turn("answer for alpha", match="task alpha"),
        ]
    )
    alpha, beta = await asyncio.gather(
        stream(server, "please do task alpha"), stream(server, "now task beta")
    )
    assert (alpha.text, beta.text) == ("answer for alpha", "answer for beta")
    assert server.remaining == []


async def test_no_turn_left_gives_400_naming_the_last_user_message(replay_server: ServerFactory) -> None:
    server = replay_server([text_turn("only for gamma", match="gamma")])
    with pytest.raises(BadRequestError) as caught:
        await stream(server, "what about delta?")
    message = str(caught.value)
    assert "what about delta?" in message
    assert "1 turn(s) left" in message
    assert "gamma" in message
    assert len(server.remaining) == 1


async def test_usage_arrives_from_the_script_and_as_an_estimate(replay_server: ServerFactory) -> None:
    scripted = {"text": "ok", "usage": {"prompt_tokens": 1234, "completion_tokens": 56}}
    server = replay_server([scripted, scripted, text_turn("no usage given here")])
    with_option = await stream(server, stream_options={"include_usage": True})
    assert (with_option.usage.prompt_tokens, with_option.usage.completion_tokens) == (1234, 56)
    response = await llm_call(messages=user("hi"), stream=True, **litellm_kwargs(server))
    rebuilt = rebuild_stream([chunk async for chunk in response])
    assert (rebuilt.usage.prompt_tokens, rebuilt.usage.completion_tokens) == (1234, 56)
    estimated = await stream(server, stream_options={"include_usage": True})
    assert estimated.usage.prompt_tokens > 0
    assert estimated.usage.completion_tokens > 0


async def test_non_streaming_completion(replay_server: ServerFactory) -> None:
    server = replay_server(
        [
            tool_turn(
                "Read",
                {"file_path": "/x"},
                text="Reading.",
                usage={"prompt_tokens": 7, "completion_tokens": 3},
            )
        ]
    )
    response = await llm_call(messages=user("hi"), tools=TOOLS, **litellm_kwargs(server))
    message = response.choices[0].message
    assert message.content == "Reading."
    assert message.tool_calls[0].function.name == "Read"
    assert json.loads(message.tool_calls[0].function.arguments) == {"file_path": "/x"}
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.usage.total_tokens == 10


async def test_requests_are_recorded_for_assertions(replay_server: ServerFactory) -> None:
    server = replay_server([text_turn("one"), text_turn("two")])
    await stream(server, "first question")
    assert server.requests[0]["messages"] == user("first question")
    assert server.requests[0]["tools"][0]["function"]["name"] == "Read"
    assert server.requests[0]["stream"] is True
    assert [t.text for t in server.remaining if isinstance(t, ResponseTurn)] == ["two"]


async def test_record_mode_proxies_to_upstream_and_writes_a_replayable_cassette(
    replay_server: ServerFactory, tmp_path: Path
) -> None:
    upstream = replay_server(
        [
            tool_turn(
                "Read",
                {"file_path": "/data.csv"},
                text="Looking.",
                usage={"prompt_tokens": 50, "completion_tokens": 9},
            ),
            text_turn("It has 3 rows."),
        ],
    )
    out = tmp_path / "recorded.json"
    recorder = record_server(out, "openai/upstream-model", upstream_url=upstream.url, api_key="x")
    with recorder:
        first = await stream(recorder, "describe data.csv")
        assert json.loads(first.tool_calls[0]["arguments"]) == {"file_path": "/data.csv"}
        assert len(load_cassette(out).turns) == 1
        second = await stream(recorder, "and then?")
        assert second.text == "It has 3 rows."
    assert upstream.requests[1]["messages"] == user("and then?")
    assert upstream.requests[0]["tools"] == TOOLS
    cassette = load_cassette(out)
    assert len(cassette.turns) == 2
    first_turn = cassette.turns[0]
    assert isinstance(first_turn, ResponseTurn)
    assert (first_turn.text, first_turn.tool_calls[0].arguments) == ("Looking.", {"file_path": "/data.csv"})
    assert first_turn.usage is not None and first_turn.usage.prompt_tokens == 50
    replayed = await stream(replay_server(out), "describe data.csv")
    assert (replayed.text, replayed.tool_calls[0]["arguments"]) == (
        "Looking.",
        first.tool_calls[0]["arguments"],
    )


async def test_record_mode_passes_upstream_errors_through_without_recording(
    replay_server: ServerFactory, tmp_path: Path
) -> None:
    upstream = replay_server([error_turn(429, "quota gone")])
    out = tmp_path / "recorded.json"
    with (
        record_server(
            out, "openai/m", upstream_url=upstream.url, api_key="x", match_first_user=True
        ) as recorder,
        pytest.raises(RateLimitError, match="quota gone"),
    ):
        await stream(recorder)
    assert load_cassette(out).turns == []


async def test_sse_wire_format_over_raw_http(replay_server: ServerFactory) -> None:
    server = replay_server([tool_turn("Read", {"file_path": "/a/long/path/to/file.txt"}, text="Reading now")])
    body = {
        "model": "replay",
        "messages": user("hi"),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{server.url}/chat/completions", json=body, headers={"Authorization": "Bearer anything"}
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line for line in response.text.split("\n\n") if line]
    assert all(event.startswith("data: ") for event in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    assert calls[0]["id"] and calls[0]["type"] == "function" and calls[0]["function"]["name"] == "Read"
    argument_chunks = [call["function"]["arguments"] for call in calls[1:]]
    assert len(argument_chunks) > 1
    assert json.loads("".join(argument_chunks)) == {"file_path": "/a/long/path/to/file.txt"}
    assert sum(1 for d in deltas if d.get("content")) > 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


async def test_error_turn_wire_format_has_status_body_and_retry_after(replay_server: ServerFactory) -> None:
    server = replay_server([{"error": {"status": 429, "message": "wait", "retry_after": 2}}])
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{server.url}/chat/completions", json={"messages": []})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["message"] == "wait"
    assert response.json()["error"]["type"] == "rate_limit_error"


def test_models_health_and_unknown_paths(replay_server: ServerFactory) -> None:
    server = replay_server({"model": "gpt-4o-mini", "turns": [text_turn("x")]})
    base = server.url.removesuffix("/v1")
    models = httpx.get(f"{server.url}/models").json()
    assert [m["id"] for m in models["data"]] == ["gpt-4o-mini", "replay"]
    assert httpx.get(f"{base}/health").json() == {"status": "ok", "remaining": 1, "requests": 0}
    assert httpx.get(f"{base}/nope").status_code == 404
    assert httpx.post(f"{base}/chat/completions", content=b"not json").status_code == 400
    reply = httpx.post(f"{base}/chat/completions", json={"model": "m", "messages": user("hi")}).json()
    assert reply["model"] == "gpt-4o-mini" and reply["choices"][0]["message"]["content"] == "x"


def test_cassette_save_load_roundtrip_and_bare_list(tmp_path: Path) -> None:
    cassette = to_cassette(
        [text_turn("hello"), tool_turn("Read", "{broken"), error_turn(500, "boom", match="m")]
    )
    path = tmp_path / "c.json"
    save_cassette(cassette, path)
    assert load_cassette(path) == cassette
    assert json.loads(path.read_text())["version"] == 1
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([text_turn("hi")]))
    assert load_cassette(bare) == Cassette(turns=[ResponseTurn(text="hi")])


def test_cassette_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="txt"):
        to_cassette([{"txt": "typo"}])


async def test_start_replay_points_litellm_env_at_the_server_and_restores_it(tmp_path: Path) -> None:
    path = tmp_path / "demo.json"
    save_cassette(to_cassette([text_turn("from the env")]), path)
    before = os.environ.get("OPENAI_API_BASE")
    earlier = start_replay(path)
    server = start_replay(path)  # re-running the notebook cell replaces the earlier server
    try:
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"{earlier.url}/models")
        assert os.environ["OPENAI_API_BASE"] == server.url
        response = await llm_call(model="openai/replay", messages=user("hi"), max_retries=0)
        assert response.choices[0].message.content == "from the env"
    finally:
        server.stop()
    assert os.environ.get("OPENAI_API_BASE") == before


def test_cut_non_streaming_response_breaks_the_body(replay_server: ServerFactory) -> None:
    server = replay_server([{"text": "a complete answer that will be cut", "cut_stream": True}])
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(f"{server.url}/chat/completions", json={"messages": user("hi")})


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_cli_plays_a_cassette_until_stopped(tmp_path: Path, stop_signal: signal.Signals) -> None:
    path = tmp_path / "cli.json"
    save_cassette(to_cassette([text_turn("hello from the cli")]), path)
    root = Path(goat_jupyter.__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "goat_jupyter.replay", str(path), "--quiet"],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        reply = httpx.post(f"{url}/chat/completions", json={"messages": user("hi")}, timeout=10).json()
        assert reply["choices"][0]["message"]["content"] == "hello from the cli"
    finally:
        process.send_signal(stop_signal)
        assert process.wait(timeout=10) == 0


async def test_cli_record_arguments_build_a_recording_server(
    replay_server: ServerFactory, tmp_path: Path
) -> None:
    upstream = replay_server([text_turn("recorded through the cli")])
    out = tmp_path / "cli-recorded.json"
    server = build_server(
        ["record", str(out), "--upstream", upstream.url, "--upstream-api-key", "x", "--quiet"]
    )
    with server:
        assert (await stream(server, "record me")).text == "recorded through the cli"
    turns = load_cassette(out).turns
    assert [(t.text, t.note) for t in turns if isinstance(t, ResponseTurn)] == [
        ("recorded through the cli", "record me")
    ]


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_scripted_lone_surrogate_goes_out_as_a_json_escape(
    replay_server: ServerFactory, streamed: bool
) -> None:
    """A hostile model's text, tool name and arguments may hold lone surrogates; JSON carries them
    only as `\\udXXX` escapes, and a client must receive exactly those characters."""
    turn = tool_turn("Re\udc00ad", {"file_path": "/x\ud800"}, text="hi \udfff there")
    server = replay_server([turn])
    body = {"model": "replay", "messages": user("hi"), "stream": streamed}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{server.url}/chat/completions", json=body)
    assert response.status_code == 200
    response.content.decode("utf-8")  # the bytes are valid UTF-8
    assert "\\udfff" in response.text and "\\udc00" in response.text
    if streamed:
        chunks = [json.loads(e.removeprefix("data: ")) for e in response.text.split("\n\n")[:-2] if e]
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        text = "".join(d.get("content") or "" for d in deltas)
        calls = [call for d in deltas for call in d.get("tool_calls", [])]
        name, arguments = calls[0]["function"]["name"], "".join(c["function"]["arguments"] for c in calls)
    else:
        message = response.json()["choices"][0]["message"]
        text, call = message["content"], message["tool_calls"][0]["function"]
        name, arguments = call["name"], call["arguments"]
    assert text == "hi \udfff there" and name == "Re\udc00ad"
    assert json.loads(arguments) == {"file_path": "/x\ud800"}
