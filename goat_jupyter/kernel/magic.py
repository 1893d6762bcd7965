"""%%goat and %goat: option parsing, the async-cell rewrite, and the single sync/async boundary."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import shlex
from pathlib import Path
from typing import Any

from goat_jupyter.config.keys import sync_keys
from goat_jupyter.kernel import commands
from goat_jupyter.kernel.checkpoint_run import run_scope
from goat_jupyter.kernel.cite_run import check_answer
from goat_jupyter.kernel.commands.trust import check_folder_trust
from goat_jupyter.kernel.replay_choice import Chosen, choose_recording, this_cell, with_cell_request
from goat_jupyter.kernel.replay_run import (
    Departed,
    ReplayStoppedError,
    RunTap,
    departed_run,
    note_departure,
    recording_of,
    replaying,
    resume_prompt,
    run_start,
    show_recording,
)
from goat_jupyter.kernel.review import note as review_note
from goat_jupyter.kernel.runtime import GoatRuntime, RunOptions
from goat_jupyter.replay.recording import Recording
from goat_jupyter.settings import PERMISSION_MODES
from goat_jupyter.tools.events import Event, EventSink, Notice, RunFinished
from goat_jupyter.ui import CellRenderer, Renderer, comm_idle, make_renderer

_runtime: GoatRuntime | None = None


class OptionError(ValueError):
    pass


class GoatInterruptedError(Exception):
    """Ends a stopped %%goat cell as an error (so Run All halts) shown as one line, not a traceback."""

    def __init__(self, turns: int) -> None:
        plural = "" if turns == 1 else "s"
        super().__init__(f"Interrupted by the user after {turns} turn{plural}.")

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of the traceback
        return [f"\x1b[33m⊘ {self}\x1b[0m"]


class _TurnCounter:
    """Passes events on and remembers how many turns the top-level run reported."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.turns = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunFinished) and event.extra.get("agent_id") is None:
            self.turns = event.turns
        self.sink(event)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print and exit the kernel's process
        raise OptionError(f"%%goat: {message}. Usage: {self.format_usage().strip()}")


def _cell_parser() -> _Parser:
    parser = _Parser(prog="%%goat", add_help=False)
    parser.add_argument("--model", "-m")
    parser.add_argument("--mode", choices=PERMISSION_MODES)
    parser.add_argument("--max-turns", type=int, dest="max_turns")
    parser.add_argument("--max-cost", type=float, dest="max_cost")
    parser.add_argument("--max-tokens", type=int, dest="max_tokens")
    parser.add_argument("--new", action="store_true")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--replay", action="store_true")
    again.add_argument("--fresh", action="store_true")
    return parser


def parse_cell_options(line: str) -> RunOptions:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise OptionError(f"%%goat: cannot parse options ({exc}).") from None
    parsed = _cell_parser().parse_args(words)
    if parsed.max_turns is not None and parsed.max_turns < 1:
        raise OptionError("%%goat: --max-turns must be at least 1.")
    if parsed.max_cost is not None and not parsed.max_cost >= 0:  # also refuses nan
        raise OptionError("%%goat: --max-cost must be a number of dollars, 0 or more (e.g. 0.50).")
    if parsed.max_tokens is not None and parsed.max_tokens < 1:
        raise OptionError("%%goat: --max-tokens must be at least 1.")
    return RunOptions(
        model=parsed.model,
        mode=parsed.mode,
        max_turns=parsed.max_turns,
        max_cost=parsed.max_cost,
        max_tokens=parsed.max_tokens,
        new=parsed.new,
        replay=parsed.replay,
        fresh=parsed.fresh,
    )


def runtime() -> GoatRuntime:
    """The kernel's goat, created on first use in the kernel's working directory."""
    global _runtime
    sync_keys()  # the settings panel's key store, as it is now (a removed key leaves this kernel)
    if _runtime is None:
        _runtime = GoatRuntime(Path.cwd())
        atexit.register(_runtime.shutdown)
    return _runtime


async def run_cell(line: str, body: str, renderer: Renderer | None = None) -> None:
    """What a %%goat cell awaits (see `extension.transform_goat_cell`); `renderer` may be live already."""
    renderer = renderer or make_renderer("auto")
    ready = _ready(line, body)
    if isinstance(ready, str):
        renderer.close()
        print(ready)
        return
    goat, options, prompt = ready
    cell = this_cell()
    options = with_cell_request(options, cell)
    departed = departed_run(goat, prompt, options)
    chosen = Chosen() if departed else await choose_recording(goat, prompt, options, cell)
    if chosen.refused:
        renderer.close()
        print(chosen.refused)
        return
    goat.replays.ran(cell.cell_id, prompt)
    await _run_shown(goat, prompt, options, renderer, chosen, departed)


def _ready(line: str, body: str) -> tuple[GoatRuntime, RunOptions, str] | str:
    """The runtime, options and prompt of the cell, or the one line that says why it cannot run."""
    try:
        options = parse_cell_options(line)
    except OptionError as exc:
        return str(exc)
    prompt = body.strip()
    if not prompt:
        return "%%goat: write your request in the cell below the %%goat line."
    goat = runtime()
    refused = goat.refused_by_policy(options)
    return refused if refused else (goat, options, prompt)


async def _run_shown(
    goat: GoatRuntime,
    prompt: str,
    options: RunOptions,
    renderer: Renderer,
    chosen: Chosen,
    departed: Departed | None,
) -> None:
    """Run the cell's prompt (or replay its recording, or go on from a stopped replay) in the cell."""
    settings = goat.session.settings
    model = options.model or settings.model
    recording = chosen.recording
    attach_interaction(goat, renderer)
    _start_header(renderer, prompt, options, goat, recording)
    counter = _TurnCounter(renderer.handle)
    tap = RunTap(counter, str(goat.session.cwd))
    start = departed.start if departed else run_start(goat, options.new)
    for note in chosen.notes:
        renderer.handle(Notice(note, "info"))
    asked = resume_prompt(goat, departed, tap) if departed else prompt
    try:
        await check_folder_trust(goat, renderer)  # before anything of the project's can apply
        review_note.tell(goat, renderer)  # what the user kept and undid of goat's notebook edits
        async with run_scope(goat, renderer, prompt):  # checkpoint + live-notebook state
            await _run(goat, asked, options, tap, recording)
        await check_answer(goat, renderer, start.first)  # citations marked before the cell closes
    except asyncio.CancelledError:
        renderer.close()
        raise GoatInterruptedError(counter.turns) from None
    except Exception as exc:  # the cell shows the failure; the session stays usable
        show_failure(renderer, exc, model)
        renderer.close()
        return
    renderer.close()
    _keep_recording(goat, recording, recording or recording_of(goat, model, prompt, start, tap))
    note_departure(goat, prompt, start, tap)
    if (line := tap.departure_line()) is not None:
        raise ReplayStoppedError(line)


def _start_header(
    renderer: Renderer, prompt: str, options: RunOptions, goat: GoatRuntime, recording: Recording | None
) -> None:
    settings = goat.session.settings
    model = options.model or settings.model
    shown = f"{recording.model or 'model'} · replayed" if recording else model
    if recording is not None and isinstance(renderer, CellRenderer):
        renderer.text_mark = f"↻ replayed from {recording.model or 'a recording'}"
    renderer.start(
        prompt, model=shown, mode=options.mode or settings.permission_mode, style=settings.output_style
    )


async def _run(
    goat: GoatRuntime, prompt: str, options: RunOptions, tap: RunTap, recording: Recording | None
) -> None:
    if recording is None:
        await goat.run(prompt, options, tap)
        return
    with replaying(goat, recording) as source:
        tap.source = source
        await goat.run(prompt, options, tap)


def _keep_recording(goat: GoatRuntime, replayed: Recording | None, recording: Recording | None) -> None:
    if recording is None:
        return
    goat.replays.kept(recording)  # made or played here: running the cell again asks the model
    if why_not := show_recording(recording, replayed=replayed is not None):
        print(why_not)


def show_failure(renderer: Renderer, exc: BaseException, model: str) -> None:
    """The failure as one sentence with what to check (full text folded), above the footer."""
    from goat_jupyter.tools.events import Notice
    from goat_jupyter.tools.redaction import clean_text
    from goat_jupyter.ui.failure import explain_exception, failure_bundle

    sentence, error_text = explain_exception(exc, model)
    sentence, error_text = clean_text(sentence), clean_text(error_text)  # an error may quote the key
    if isinstance(renderer, CellRenderer):
        renderer.add_bundle(failure_bundle(sentence, error_text))
        return
    renderer.handle(Notice(f"{sentence}\n{error_text}".strip(), "error"))


def attach_interaction(goat: GoatRuntime, renderer: Renderer) -> None:
    """Per cell: widgets when the frontend can answer, stdin in a terminal, else deny what would ask."""
    from goat_jupyter.permissions.policy import RulePolicy
    from goat_jupyter.plugins.registry import with_user_approver
    from goat_jupyter.tools.events import Notice
    from goat_jupyter.tools.redaction import clean_text
    from goat_jupyter.ui.interaction import make_interaction

    comm_idle.install(comm_idle.current_kernel())
    show = renderer.show if isinstance(renderer, CellRenderer) else None
    interaction = make_interaction(show, lambda: goat.session.cwd, notebook=lambda: goat.services.bridge)
    goat.services.ui = interaction

    def notify(text: str) -> None:
        renderer.handle(Notice(clean_text(text), "warning"))

    if goat.policy is None:
        goat.policy = RulePolicy()
    if isinstance(goat.policy, RulePolicy):  # a policy plugged in through the API is left alone
        goat.policy.approver = with_user_approver(interaction.approver)  # goat_jupyter.approver
        goat.policy.notify = notify


def goat_line_magic(line: str) -> Any:
    """%goat config|status|reset|history|resume|help."""
    return commands.dispatch(runtime(), line)


def goat_cell_magic(line: str, cell: str) -> None:
    """Only reached when the input transformer did not run (e.g. run_cell_magic from code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(run_cell(line, cell))
        return
    print("%%goat must be the first line of a cell so it can run asynchronously.")
