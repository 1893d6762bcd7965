"""What leaves a tool call or the model for the user and the model: keys redacted, text encodable.

`clean_output` is applied once per call by the executor (every tool: built-in, MCP, plugins, the
Agent tool's subagents); `CleanSink` wraps a renderer's event sink, so streamed model text and tool
progress are redacted even when a key is split across two pieces."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from goat_jupyter.config.secrets import Secrets, StreamRedactor, known_secrets
from goat_jupyter.text import map_strings, without_surrogates
from goat_jupyter.tools.events import (
    Event,
    EventSink,
    Notice,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from goat_jupyter.tools.output import ToolOutput


def cleaner(secrets: Secrets | None = None) -> Callable[[str], str]:
    """A function making one string safe to show: no known key, no lone surrogate."""
    known = secrets if secrets is not None else known_secrets()

    def clean(text: str) -> str:
        return known.redact(without_surrogates(text))

    return clean


def clean_text(text: str) -> str:
    return cleaner()(text)


def clean_output(output: ToolOutput) -> ToolOutput:
    """A copy of the output with its text, summary, title, metadata and attachment notes cleaned."""
    clean = cleaner()
    return replace(
        output,
        content=clean(output.content),
        title=clean(output.title),
        summary=clean(output.summary),
        display=clean(output.display) if output.display is not None else None,
        metadata=map_strings(output.metadata, clean) if output.metadata else output.metadata,
        attachments=[replace(a, description=clean(a.description)) for a in output.attachments],
    )


class CleanSink:
    """An event sink that cleans every event before the renderer sees it; a stream's held-back end
    is let out when the stream ends (the call finishes, the model's turn is over)."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self._text: dict[str | None, StreamRedactor] = {}  # per agent
        self._progress: dict[str, StreamRedactor] = {}  # per call

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            stream = self._text.get(event.agent_id) or self._text.setdefault(event.agent_id, StreamRedactor())
            shown = stream.feed(event.text)  # the model's text was cleaned where it entered (agent/turns.py)
            if shown:
                self.sink(replace(event, text=shown))
            return
        # Any other event ends the model's text before it (of the same agent; of all at the end).
        ended = list(self._text) if isinstance(event, RunFinished) else [event.agent_id]
        for agent_id in ended:
            stream = self._text.pop(agent_id, None)
            rest = stream.flush() if stream is not None else ""
            if rest:
                self.sink(TextDelta(rest, agent_id))
        self.sink(self._cleaned(event))

    def _cleaned(self, event: Event) -> Event:
        match event:
            case ToolStarted():
                clean = cleaner()
                return replace(event, title=clean(event.title), args=map_strings(event.args, clean))
            case ToolProgress():
                return self._progress_event(event)
            case ToolFinished():
                return self._finished(event)
            case Notice():
                return replace(event, text=clean_text(event.text))
            case _:
                return event

    def _progress_event(self, event: ToolProgress) -> ToolProgress:
        title = clean_text(event.title) if event.title is not None else None
        output = event.output
        if output:
            stream = self._progress.get(event.call_id) or self._progress.setdefault(
                event.call_id, StreamRedactor()
            )
            output = stream.feed(without_surrogates(output)) or None
        return replace(event, title=title, output=output)

    def _finished(self, event: ToolFinished) -> ToolFinished:
        """The output itself was cleaned by the executor (the only emitter of ToolFinished) before
        the model saw it; what is left is the end of the call's streamed progress."""
        stream = self._progress.pop(event.call_id, None)
        rest = stream.flush() if stream is not None else ""
        if rest:
            self.sink(ToolProgress(event.call_id, None, rest, event.agent_id))
        return event
