"""A subagent's transcript: its events folded into a short, bounded list of entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from goat_jupyter.tools.events import (
    Notice,
    SubagentStarted,
    TextDelta,
    TextRetracted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.ui import style
from goat_jupyter.ui.style import CardStatus
from goat_jupyter.ui.summary import relative, result_summary
from goat_jupyter.ui.text import call_line, compact_input, first_line

MAX_ENTRIES = 100
MAX_TEXT_CHARS = 4_000
NestedEvent = (
    TextDelta
    | TextRetracted
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | SubagentStarted
    | TurnUsage
    | Notice
)


@dataclass
class NestedEntry:
    """One step of a subagent: a piece of its text, a tool call or a notice."""

    kind: Literal["text", "tool", "notice"]
    text: str
    status: CardStatus = "ok"
    elapsed_s: float | None = None
    name: str = ""  # a tool row: `✓ Read data/a.csv · 49 lines · 0.01s`, like the parent's rows
    argument: str = ""
    summary: str = ""


@dataclass
class AgentTranscript:
    """What a subagent did, shown collapsed inside its parent's Agent card."""

    agent_id: str
    base: str = ""  # the workspace: paths under it are shown relative, as in the parent's rows
    entries: list[NestedEntry] = field(default_factory=lambda: list[NestedEntry]())
    tools: dict[str, NestedEntry] = field(default_factory=lambda: dict[str, NestedEntry]())
    dropped: int = 0
    tool_calls: int = 0


def apply_nested(transcript: AgentTranscript, event: NestedEvent) -> bool:
    """Fold one subagent event into its transcript; True when something visible changed."""
    match event:
        case TextDelta():
            return _add_text(transcript, event.text)
        case ToolStarted():
            argument = compact_input(event.name, event.args, transcript.base)
            entry = NestedEntry(
                "tool",
                call_line(event.name, event.args, transcript.base)[2:],
                "running",
                None,
                event.name,
                argument,
            )
            transcript.tools[event.call_id] = entry
            transcript.tool_calls += 1
            _append(transcript, entry)
        case ToolFinished():
            entry = transcript.tools.pop(event.call_id, None)
            if entry is None:
                entry = NestedEntry("tool", event.name)
                transcript.tool_calls += 1
                _append(transcript, entry)
            entry.status = style.finished_status(event.output.is_error, event.output.declined)
            entry.elapsed_s = event.elapsed_s
            entry.summary = relative(
                result_summary(entry.name or event.name, {}, event.output), transcript.base
            )
            if event.output.is_error:
                entry.text += f" — {event.output.summary or first_line(event.output.content, 160)}"
        case TextRetracted():
            last = transcript.entries[-1] if transcript.entries else None
            if last is None or last.kind != "text":
                return False
            last.text = last.text[: max(len(last.text) - event.chars, 0)]
        case Notice():
            _append(transcript, NestedEntry("notice", event.text))
        case _:  # its start, progress and usage are not shown
            return False
    return True


def _add_text(transcript: AgentTranscript, text: str) -> bool:
    last = transcript.entries[-1] if transcript.entries else None
    if last is not None and last.kind == "text":
        last.text = (last.text + text)[-MAX_TEXT_CHARS:]
        return True
    if not text.strip():
        return False
    _append(transcript, NestedEntry("text", text.lstrip()))
    return True


def _append(transcript: AgentTranscript, entry: NestedEntry) -> None:
    transcript.entries.append(entry)
    if len(transcript.entries) > MAX_ENTRIES:
        transcript.entries.pop(0)
        transcript.dropped += 1
