"""A %%goat cell's recording (format: `goat_jupyter.replay.recording`): keep it as an output of the
cell after a run with the model, find it in the saved notebook, and replay it without the model when
`goat_jupyter.replay.rule` says so."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from goat_jupyter.agent.llm import LLMClient
from goat_jupyter.kernel.runtime import GoatRuntime, RunOptions
from goat_jupyter.replay import REPLAY_API_KEY, REPLAY_MODEL, ReplayServer
from goat_jupyter.replay.recording import (
    DETERMINISTIC_TOOLS,
    CallResult,
    Departure,
    Recording,
    RecordingSource,
    digest,
    record,
    recording_bundle,
)
from goat_jupyter.tools.events import Event, EventSink, RunFinished, ToolFinished
from goat_jupyter.ui.summary import result_summary
from goat_jupyter.ui.text import compact_input


class ReplayStoppedError(Exception):
    """Ends a replay that departed from its recording as an error (Run All halts), shown as one line.
    Plain text: the error output's pink makes coloured text unreadable."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of the traceback
        return [f"⊘ {self}"]


@dataclass
class RunTap:
    """Passes the run's events on; notes each top-level call's result, and while replaying compares it
    with the recording (the source then stops the replay at the next model call)."""

    sink: EventSink
    workspace: str
    source: RecordingSource | None = None
    results: dict[str, CallResult] = field(default_factory=lambda: dict[str, CallResult]())

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolFinished):
            result = self._result(event)
            self.results[event.call_id] = result
            if self.source is not None and event.agent_id is None:  # a subagent's steps are its own
                self.source.check(event.call_id, result)
        elif (
            isinstance(event, RunFinished) and self.source is not None and event.extra.get("agent_id") is None
        ):
            # A replay asked no model: its footer says how it ended, with no tokens to claim.
            event = replace(event, stop_reason="replay_stopped" if self.departure else "replayed")
        self.sink(event)

    def _result(self, event: ToolFinished) -> CallResult:
        # The folder is left out of the digest: a notebook replays the same in another folder.
        output = event.output
        content = output.content.replace(self.workspace, "<workspace>")
        summary = ""
        if event.name in DETERMINISTIC_TOOLS and not output.is_error:
            summary = result_summary(event.name, {}, output).replace(self.workspace, "<workspace>")
        return CallResult(ok=not output.is_error, digest=digest(content), summary=summary)

    @property
    def departure(self) -> Departure | None:
        return self.source.departure if self.source is not None else None

    def departure_line(self) -> str | None:
        found = self.departure
        return None if found is None else departure_line(found, self.workspace) + " " + FRESH_HINT


FRESH_HINT = "Run fresh (the button below, or %%goat --fresh) goes on from there with the model."


def departure_line(departure: Departure, workspace: str = "") -> str:
    """`Replay stopped at step 2.1 (Glob *.csv): its result changed since the recording (3 files now,
    2 recorded).` In words, never digests."""
    call = departure.call
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    target = compact_input(call.name, arguments, workspace)
    return f"Replay stopped at step {departure.step} ({' '.join(filter(None, (call.name, target)))}): {_what_changed(departure)}."


def _same_unit(now: str, then: str) -> str:
    """`2` for `2 files` beside `3 files`: the unit is said once."""
    number, _, unit = then.partition(" ")
    return number if unit and now.partition(" ")[2] == unit else then


def _what_changed(departure: Departure) -> str:
    now, then = departure.now.summary, departure.call.summary
    if departure.kind == "failed":
        return "it failed where the recording succeeded" + (f" ({now})" if now else "")
    if departure.kind == "succeeded":
        return "it succeeded where the recording failed" + (f" ({now})" if now else "")
    changed = "its result changed since the recording"
    if now and then and now != then:
        return f"{changed} ({now} now, {_same_unit(now, then)} recorded)"
    if now and now == then:
        return f"{changed} (still {now}, but not the same content)"
    return f"{changed} ({now} now)" if now else changed


@contextmanager
def replaying(goat: GoatRuntime, recording: Recording) -> Generator[RecordingSource]:
    """Every model call of the runtime goes to a local server that plays the recording."""
    source = RecordingSource(recording)
    server = ReplayServer(source=source)
    url = server.start()
    goat.replay_client = LLMClient(REPLAY_MODEL, extra={"api_base": url, "api_key": REPLAY_API_KEY})
    try:
        yield source
    finally:
        goat.replay_client = None
        server.stop()


@dataclass(frozen=True)
class RunStart:
    """Where a run starts: the session's message count and the subagents that existed already."""

    first: int
    agents: frozenset[str]
    runner: object  # a new session brings a new runner, whose ids start again at 1


def run_start(goat: GoatRuntime, new: bool) -> RunStart:
    runner = goat.services.subagents
    return RunStart(0 if new else len(goat.session.messages), frozenset(_subagents(goat)), runner)


def _subagents(goat: GoatRuntime) -> dict[str, list[dict[str, Any]]]:
    """Each subagent's id and messages, in the order they started."""
    runner: Any = goat.services.subagents
    agents: dict[str, Any] = getattr(runner, "agents", None) or {}
    return {agent_id: list(agent.session.messages) for agent_id, agent in agents.items()}


def recording_of(
    goat: GoatRuntime, model: str, prompt: str, start: RunStart, tap: RunTap
) -> Recording | None:
    """The recording of the run that added the session's messages from `start` on (None if compacted)."""
    messages = goat.session.messages
    if len(messages) < start.first:
        return None
    old = start.agents if goat.services.subagents is start.runner else frozenset[str]()
    agents = [history for agent_id, history in _subagents(goat).items() if agent_id not in old]
    return record(model, prompt, messages[start.first :], tap.results, agents)


def show_recording(recording: Recording, *, replayed: bool = False) -> str | None:
    """Display the recording as the cell's output; a line saying why not when it is too large."""
    bundle = recording_bundle(recording, replayed=replayed)
    if bundle is None:
        return "goat: this run is too large to record in the notebook; it will ask the model when run again."
    from IPython.display import publish_display_data  # pyright: ignore[reportUnknownVariableType]

    data, metadata = bundle
    publish_display_data(data, metadata=metadata)
    return None


@dataclass(frozen=True)
class Departed:
    """A replay that stopped at a step: `%%goat --fresh` on the same cell goes on from there."""

    prompt: str
    start: RunStart
    results: dict[str, CallResult]
    end: int  # the session's message count when it stopped: anything run since makes it stale
    line: str
    session: object


def note_departure(goat: GoatRuntime, prompt: str, start: RunStart, tap: RunTap) -> None:
    line = tap.departure_line()
    messages = goat.session.messages
    goat.departed = (
        None
        if line is None
        else Departed(prompt, start, dict(tap.results), len(messages), line, goat.session)
    )


def departed_run(goat: GoatRuntime, prompt: str, options: RunOptions) -> Departed | None:
    """The stopped replay this `--fresh` run continues, if it is this cell's and nothing ran since."""
    found = goat.departed
    if not isinstance(found, Departed) or not options.fresh or options.new:
        return None
    same = found.prompt == prompt and found.session is goat.session
    return found if same and len(goat.session.messages) == found.end else None


def resume_prompt(goat: GoatRuntime, departed: Departed, tap: RunTap) -> str:
    """The message that hands the stopped replay to the model (its empty last answer dropped)."""
    messages = goat.session.messages
    while (
        messages
        and messages[-1].get("role") == "assistant"
        and not messages[-1].get("content")
        and not messages[-1].get("tool_calls")
    ):
        messages.pop()
    tap.results.update(departed.results)
    where = departed.line.removesuffix(" " + FRESH_HINT).removesuffix(".")
    return (
        f"[Note from goat, not from the user] {where}. The steps above were replayed from a recording "
        "of an earlier run and their results are real. Continue the request from that point with the "
        "results you have now; do not repeat the steps that succeeded."
    )
