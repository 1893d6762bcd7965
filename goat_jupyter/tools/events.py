"""Events the agent loop and the executor emit; renderers turn them into output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goat_jupyter.tools.output import ToolOutput


@dataclass
class TextDelta:
    text: str
    agent_id: str | None = None


@dataclass
class TextRetracted:
    """The last `chars` characters of streamed text belong to an attempt that stalled and is retried."""

    chars: int
    agent_id: str | None = None


@dataclass
class ToolStarted:
    call_id: str
    name: str
    title: str
    args: dict[str, Any]
    agent_id: str | None = None


@dataclass
class ToolProgress:
    call_id: str
    title: str | None = None
    output: str | None = None  # appended output since the last event
    agent_id: str | None = None


@dataclass
class ToolFinished:
    call_id: str
    name: str
    output: ToolOutput
    elapsed_s: float
    agent_id: str | None = None
    waited_s: float = 0.0  # of elapsed_s, the time spent waiting for the user's approval


@dataclass
class SubagentStarted:
    """A subagent begins work for the parent's Agent call `parent_call_id`; its events follow."""

    parent_call_id: str
    agent_id: str | None = None  # the subagent's id, like every nested event


@dataclass
class TurnUsage:
    turn: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    agent_id: str | None = None
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache
    budget: str = ""  # the run's spend against its tightest budget, e.g. "$0.12 of $0.50 budget"


@dataclass
class Notice:
    """Something the user should know that is not model text (retries, fallbacks, interrupts)."""

    text: str
    level: str = "info"  # info | warning | error
    agent_id: str | None = None
    transient: bool = (
        False  # true only while it happens ("Starting the model client…"): text transcripts leave it out
    )


@dataclass
class RunFinished:
    turns: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    elapsed_s: float
    stop_reason: str  # end_turn | max_turns | budget | interrupted | error
    extra: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


@dataclass
class Activity:
    """What the run waits on now ("Starting the model client"), for the live status line; not kept in the transcript."""

    label: str
    agent_id: str | None = None


Event = (
    TextDelta
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | SubagentStarted
    | TurnUsage
    | Notice
    | RunFinished
    | Activity
    | TextRetracted
)
EventSink = Callable[[Event], None]


def drop_event(event: Event) -> None:
    return None
