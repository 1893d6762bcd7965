"""A %%goat cell's recording (format: `goat_jupyter.replay.recording`): keep it as an output of the
cell after a run with the model, find it in the saved notebook, and replay it without the model."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from goat_jupyter.agent.llm import LLMClient
from goat_jupyter.kernel.runtime import GoatRuntime, RunOptions
from goat_jupyter.replay import REPLAY_API_KEY, REPLAY_MODEL, ReplayServer
from goat_jupyter.replay.recording import (
    RECORDING_MIME,
    CallResult,
    Recording,
    RecordingSource,
    digest,
    parse_recording,
    record,
    recording_bundle,
)
from goat_jupyter.text import loads_json
from goat_jupyter.tools.events import Event, EventSink, ToolFinished

MAX_NOTEBOOK_BYTES = 20_000_000  # a notebook larger than this is not searched for recordings


class ReplayStoppedError(Exception):
    """Ends a replay that departed from its recording as an error (Run All halts), shown as one line."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of the traceback
        return [f"\x1b[33m⊘ {self}\x1b[0m"]


@dataclass(frozen=True)
class Chosen:
    recording: Recording
    note: str = ""  # why a recording of another prompt replays (shown in the cell)


async def choose_recording(
    goat: GoatRuntime, prompt: str, options: RunOptions, cell_id: str | None
) -> Chosen | None:
    """The recording this run replays, or None to ask the model (see README "Reproducible notebooks"):
    one of this prompt; else, when replay is forced or no model key is set, the cell's own recording."""
    if options.fresh:
        return None
    if goat.session.settings.replay == "never" and not options.replay:
        return None
    kept = recordings_in(notebooks(goat))  # each notebook is read once
    found = next((recording for _owner, recording in kept if recording.prompt == prompt), None)
    if found is not None:
        return Chosen(found)
    own = next((recording for owner, recording in kept if cell_id and owner == cell_id), None)
    if own is None:
        return None
    if must_replay(goat, options):
        return Chosen(own, _changed_note(own, "replay is set to always"))
    missing = await missing_keys(goat, options)
    if goat.session.settings.replay == "auto" and missing:
        return Chosen(own, _changed_note(own, f"no model key is set ({' or '.join(missing)})"))
    return None


def _changed_note(recording: Recording, why: str) -> str:
    first = recording.prompt.splitlines()[0] if recording.prompt else ""
    return (
        f"This cell's prompt changed since it was recorded, and {why}: replaying the recording of "
        f"“{first[:80]}”. Run the cell with --fresh to ask the model."
    )


async def missing_keys(goat: GoatRuntime, options: RunOptions) -> list[str]:
    """The key variables the cell's model needs and the environment lacks (none for a local endpoint)."""
    from goat_jupyter.agent.llm import litellm_module, llm_client_for
    from goat_jupyter.agent.provider_errors import missing_key_variables

    settings = goat.session.settings
    client = llm_client_for(settings, options.model or settings.model)
    return missing_key_variables(await litellm_module(), client.model, client.extra)


def must_replay(goat: GoatRuntime, options: RunOptions) -> bool:
    return options.replay or goat.session.settings.replay == "always"


def notebooks(goat: GoatRuntime) -> list[Path]:
    """Where the cell's saved outputs may be: the kernel's notebook, else the notebooks beside it
    (nbconvert and papermill tell the kernel its folder, not its file)."""
    known = goat.session.notebook_path
    if known is not None and known.is_file():
        return [known]
    return sorted(Path.cwd().glob("*.ipynb"))


def recordings_in(paths: list[Path]) -> list[tuple[str, Recording]]:
    """Every recording kept in these notebooks, with the id of the cell that holds it."""
    return [found for path in paths for found in _cell_recordings(path)]


def _cell_recordings(path: Path) -> Iterator[tuple[str, Recording]]:
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return
        notebook = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for cell in _list(_dict(notebook).get("cells")):
        for output in _list(_dict(cell).get("outputs")):
            found = parse_recording(_dict(_dict(output).get("data")).get(RECORDING_MIME))
            if found is not None:
                yield str(_dict(cell).get("id") or ""), found


def _dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


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
            # The folder is left out of the digest: a notebook replays the same in another folder.
            content = event.output.content.replace(self.workspace, "<workspace>")
            result = CallResult(ok=not event.output.is_error, digest=digest(content))
            self.results[event.call_id] = result
            if self.source is not None and event.agent_id is None:  # a subagent's steps are its own
                self.source.check(event.call_id, result.ok, result.digest)
        self.sink(event)

    @property
    def departure(self) -> str | None:
        return self.source.departure if self.source is not None else None


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


def show_recording(recording: Recording) -> str | None:
    """Display the recording as the cell's output; a line saying why not when it is too large."""
    bundle = recording_bundle(recording)
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
    line = tap.departure
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
    where = departed.line.split(". Run the cell")[0]
    return (
        f"[Note from goat, not from the user] {where}. The steps above were replayed from a recording "
        "of an earlier run and their results are real. Continue the request from that point with the "
        "results you have now; do not repeat the steps that succeeded."
    )
