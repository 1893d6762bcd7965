"""A local model reads a long prompt for minutes before its first token (issue 23): it is given that
time, says so in the live status, and a remote endpoint keeps the normal first-token timeout.

Times are scaled down 100x: a 120 s timeout becomes 1.2 s, a server that waits 150 s before its first
token waits 1.5 s, and prompt reading at 20 tokens/s becomes 2,000 tokens/s.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from goat_jupyter.agent.endpoint import is_local_endpoint, reading_allowance_s
from goat_jupyter.agent.llm import LLMClient, llm_client_for
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.errors import LLMError
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.events import Event, Notice
from goat_jupyter.tools.runner import Executor
from tests.agent_helpers import text_turn

SCALE = 100
SLOW_FIRST_TOKEN = [text_turn("Read it all.", delay_s=150 / SCALE)]


def scaled_settings(api_base: str) -> Settings:
    return Settings(
        model="openai/replay",
        api_base=api_base,
        first_token_timeout_s=120 / SCALE,
        local_prompt_tokens_per_s=20 * SCALE,
        max_retries=0,
        action_style="tools",  # the lean tool set's prompt: code style's is too short to wait for
    )


def agent_for(workspace: Path, llm: LLMClient, events: list[Event]) -> Agent:
    session = Session(workspace=workspace, settings=scaled_settings("unused"))
    registry = default_registry(session=session)
    executor = Executor(registry, session, emit=events.append)
    return Agent(session, registry, executor, llm, events.append)


def this_machines_lan_address() -> str | None:
    """A non-loopback address of this machine (no packet is sent), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


async def test_a_local_server_that_reads_a_long_prompt_is_not_timed_out(tmp_path: Path) -> None:
    events: list[Event] = []
    with ReplayServer(SLOW_FIRST_TOKEN) as server:
        llm = llm_client_for(scaled_settings(server.url))
        llm.status_after_s = 0.2
        result = await agent_for(tmp_path, llm, events).run("summarise the repository")
    assert llm.local and result.text == "Read it all."
    status = [e.text for e in events if isinstance(e, Notice) and "reading a" in e.text]
    assert len(status) == 1 and status[0].startswith("The model is reading a ")
    assert status[0].endswith("k-token prompt…")


async def test_a_remote_endpoint_keeps_the_normal_first_token_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # a remote endpoint needs one
    address = this_machines_lan_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to serve a remote-looking endpoint")
    events: list[Event] = []
    with ReplayServer(SLOW_FIRST_TOKEN, host=address) as server:
        llm = llm_client_for(scaled_settings(server.url))
        with pytest.raises(LLMError, match=r"within 1\.2 s"):
            await agent_for(tmp_path, llm, events).run("summarise the repository")
    assert not llm.local
    assert not [e for e in events if isinstance(e, Notice) and "reading a" in e.text]


async def test_a_local_server_that_never_answers_still_times_out(tmp_path: Path) -> None:
    with ReplayServer([text_turn("late", delay_s=30)]) as server:
        settings = scaled_settings(server.url)
        settings.local_prompt_tokens_per_s = 100_000  # a 6k prompt buys 0.06 s
        llm = llm_client_for(settings)
        with pytest.raises(LLMError, match="no response from the model within"):
            await agent_for(tmp_path, llm, []).run("hello")


@pytest.mark.parametrize(
    ("model", "api_base", "local"),
    [
        ("openai/m", "http://127.0.0.1:8089/v1", True),
        ("openai/m", "http://127.9.9.9:1/v1", True),
        ("openai/m", "http://localhost:8089/v1", True),
        ("openai/m", "http://LOCALHOST:8089", True),
        ("openai/m", "http://[::1]:8089/v1", True),
        ("openai/m", "http://0.0.0.0:8089/v1", True),
        ("openai/m", "https://api.example.com/v1", False),
        ("openai/m", "http://10.0.0.5:8089/v1", False),
        ("openai/m", "http://127.0.0.1.example.com/v1", False),
        ("openai/m", "http://localhost@example.com/v1", False),
        ("openai/m", "http://example.com/?host=127.0.0.1", False),
        ("openai/m", "not a url", False),
        ("ollama/qwen2.5-coder", None, True),
        ("ollama_chat/qwen2.5-coder", None, True),
        ("ollama/qwen2.5-coder", "https://ollama.example.com", False),
        ("openai/m", None, False),
        ("anthropic/claude-sonnet-4-5", None, False),
    ],
)
def test_which_endpoints_are_on_this_machine(model: str, api_base: str | None, local: bool) -> None:
    assert is_local_endpoint(model, api_base) is local


def test_the_allowance_grows_with_the_prompt() -> None:
    assert reading_allowance_s(5_700, 20) == pytest.approx(285)
    assert reading_allowance_s(0, 20) == 0 and reading_allowance_s(-5, 20) == 0
