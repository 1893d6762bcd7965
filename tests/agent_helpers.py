"""Build a real agent (session, registry, executor, litellm client) against a replay server."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.events import Event
from goat_jupyter.tools.runner import Executor


@dataclass
class AgentRig:
    session: Session
    agent: Agent
    events: list[Event] = field(default_factory=lambda: list[Event]())

    def of_type(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def make_agent(workspace: Path, base_url: str, *, max_turns: int = 20, retries: int = 4) -> AgentRig:
    session = Session(workspace=workspace)
    events: list[Event] = []
    registry = default_registry(session=session)
    executor = Executor(registry, session, emit=events.append)
    llm = LLMClient(
        "openai/replay",
        retry=RetryPolicy(max_retries=retries, base_delay_s=0.01),
        extra={"api_base": base_url, "api_key": "test-key"},
    )
    agent = Agent(session, registry, executor, llm, events.append, max_turns=max_turns)
    return AgentRig(session, agent, events)


def tool_turn(
    name: str, arguments: dict[str, Any] | str, call_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id:
        call["id"] = call_id
    return {"tool_calls": [call], **extra}


def text_turn(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def assert_history_valid(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call has exactly one tool result, and results follow their call."""
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            assert not pending, f"tool calls without results before next assistant turn: {pending}"
            pending = {c["id"] for c in message.get("tool_calls") or []}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in pending, f"result for unknown call {message['tool_call_id']}"
            pending.discard(message["tool_call_id"])
    assert not pending, f"tool calls left without results: {pending}"
