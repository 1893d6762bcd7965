"""PlainRenderer: the transcript as plain text, for terminal IPython, tests and headless runs."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TextIO

from goat_jupyter.tools.events import (
    Activity,
    Event,
    Notice,
    RunFinished,
    TextDelta,
    TextRetracted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.ui import style
from goat_jupyter.ui.nested import NestedEvent
from goat_jupyter.ui.text import (
    FOOTER_RULE,
    call_line,
    first_line,
    footer_text,
    format_seconds,
    header_text,
    notice_level,
    notice_text,
    result_lines,
)

NESTED_PREFIX = "     │ "
_log = logging.getLogger(__name__)


class PlainRenderer:
    """Streams text as it comes; announces tool calls with `⏺ Name(arg)` and summarises results."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._at_line_start = True
        self._wrote_any = False
        self._in_text = False
        self._held_space = ""
        self._open_calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._last_call: str | None = None  # the call whose announce line was printed last
        self._agent_lines: dict[str, str] = {}  # unfinished line of each subagent's text
        self._nested_agent: str | None = None  # whose lines were printed last (subagents may interleave)

    def begin(self, activity: str = "Starting") -> None:
        """Nothing to show before the header in a terminal (the cell renderer starts its live line)."""

    def start(self, prompt: str, *, model: str, mode: str, style: str = "default") -> None:
        self._guard(lambda: self._block([header_text(model, mode, style)]))

    def handle(self, event: Event) -> None:
        self._guard(lambda: self._dispatch(event))

    def close(self) -> None:
        """Print what is still pending (subagent text, calls that never finished) and end the line."""
        self._guard(self._finish)

    def _guard(self, action: Callable[[], None]) -> None:
        try:
            action()
            self._stream.flush()
        except Exception:  # rendering must never break the agent run
            _log.exception("goat: the transcript could not be printed")

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, Activity):  # no live line in a terminal: say it once
            if event.agent_id is None:
                self._block([notice_text(f"{event.label}…", "info")])
            return
        if not isinstance(event, RunFinished) and event.agent_id is not None:
            self._on_nested(event.agent_id, event)
            return
        if not isinstance(event, (ToolProgress, TurnUsage)):
            self._nested_agent = None
        match event:
            case TextDelta():
                self._on_text(event.text)
            case ToolStarted():
                self._block([call_line(event.name, event.args)])
                self._open_calls[event.call_id] = (event.name, event.args)
                self._last_call = event.call_id
            case ToolFinished():
                self._on_finished(event)
            case Notice():
                self._block([notice_text(event.text, notice_level(event.level))])
            case TextRetracted():  # printed text cannot be taken back in a terminal: say so
                self._block(
                    [notice_text("The partial answer above is repeated in full after the retry.", "info")]
                )
            case RunFinished():
                self._block([f"{FOOTER_RULE} {footer_text(event)}"])
            case _:  # progress and per-turn usage are not printed
                pass

    def _on_text(self, text: str) -> None:
        if not self._in_text:
            held = self._held_space + text
            if not held.strip():
                self._held_space = held
                return
            self._held_space = ""
            self._block([])
            self._in_text = True
            text = held.lstrip("\n")
        else:
            text = self._held_space + text
        # Trailing newlines wait for more text: a following block brings its own spacing.
        body = text.rstrip("\n")
        self._held_space = text[len(body) :]
        self._write(body)

    def _on_finished(self, event: ToolFinished) -> None:
        name, args = self._open_calls.pop(event.call_id, (event.name, {}))
        lines = result_lines(name, event.output, event.elapsed_s)
        if self._last_call != event.call_id:
            lines.insert(0, call_line(name, args))
            self._block(lines)
        else:
            self._lines(lines)
        self._last_call = None

    def _on_nested(self, agent_id: str, event: NestedEvent) -> None:
        if isinstance(event, TextRetracted):
            return
        if isinstance(event, TextDelta):
            *done, rest = (self._agent_lines.get(agent_id, "") + event.text).split("\n")
            self._agent_lines[agent_id] = rest
            self._nested_lines(agent_id, [line for line in done if line.strip()])
            return
        self._flush_agent_text(agent_id)
        if isinstance(event, ToolStarted):
            self._open_calls[event.call_id] = (event.name, event.args)
        elif isinstance(event, ToolFinished):
            name, args = self._open_calls.pop(event.call_id, (event.name, {}))
            glyph = style.STATUS_GLYPH[style.finished_status(event.output.is_error, event.output.declined)]
            line = f"{call_line(name, args)} {glyph} {format_seconds(event.elapsed_s)}"
            if event.output.is_error:
                line += f"  {event.output.summary or first_line(event.output.content, 160)}"
            self._nested_lines(agent_id, [line])
        elif isinstance(event, Notice):
            self._nested_lines(agent_id, [notice_text(event.text, notice_level(event.level))])

    def _flush_agent_text(self, agent_id: str) -> None:
        rest = self._agent_lines.pop(agent_id, "")
        if rest.strip():
            self._nested_lines(agent_id, [rest])

    def _nested_lines(self, agent_id: str, lines: list[str]) -> None:
        if not lines:
            return
        if agent_id != self._nested_agent:  # name the subagent whenever its lines (re)start
            lines = [f"[{agent_id}]", *lines]
            self._nested_agent = agent_id
        self._in_text = False
        self._lines([NESTED_PREFIX + line for line in lines])

    def _block(self, lines: list[str]) -> None:
        """Start a new block: end the current line and leave one blank line after earlier output."""
        self._end_line()
        if self._wrote_any:
            self._write("\n")
        self._in_text = False
        self._held_space = ""
        self._last_call = None
        self._lines(lines)

    def _lines(self, lines: list[str]) -> None:
        self._end_line()
        for line in lines:
            self._write(line + "\n")

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _write(self, text: str) -> None:
        if text:
            self._stream.write(text)
            self._at_line_start = text.endswith("\n")
            self._wrote_any = True

    def _finish(self) -> None:
        for agent_id in list(self._agent_lines):
            self._flush_agent_text(agent_id)
        stopped = f"  ⎿ {style.STATUS_GLYPH['stopped']} stopped before it finished"
        for call_id, (name, args) in self._open_calls.items():
            if self._last_call == call_id:
                self._lines([stopped])
            else:
                self._block([call_line(name, args), stopped])
            self._last_call = None
        self._open_calls.clear()
        self._end_line()
