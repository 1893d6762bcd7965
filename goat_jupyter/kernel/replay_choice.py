"""Which way a %%goat cell runs: the facts of the replay rule (`goat_jupyter.replay.rule`) gathered
for the running cell (its id, the Run fresh button, its recording, a re-run, the model key), and the
rule's decision acted on."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from goat_jupyter.kernel.runtime import GoatRuntime, RunOptions
from goat_jupyter.replay.notebooks import (
    REPLAY_FROM_ENV,
    folder_notebooks,
    opted_in,
    read_cells,
    running_notebook,
)
from goat_jupyter.replay.recording import Recording
from goat_jupyter.replay.rule import Asked, Own, ReplayFacts, decide, needs_key_check
from goat_jupyter.ui import comm_idle


@dataclass(frozen=True)
class CellRun:
    """The running cell as the frontend named it: its id (JupyterLab sends one, nbconvert none) and
    whether its Run fresh button started it (execute_request metadata `goatFresh`)."""

    cell_id: str | None = None
    fresh: bool = False


def this_cell() -> CellRun:
    kernel = comm_idle.current_kernel()
    try:
        found: object = kernel.get_parent("shell")["metadata"] if kernel else {}
    except Exception:  # no execute request behind this code
        return CellRun()
    metadata = cast(dict[str, Any], found) if isinstance(found, dict) else {}
    cell_id, fresh = metadata.get("cellId"), metadata.get("goatFresh") is True
    return CellRun(cell_id if isinstance(cell_id, str) and cell_id else None, fresh)


def with_cell_request(options: RunOptions, cell: CellRun) -> RunOptions:
    """The Run fresh button is `--fresh` without editing the magic line."""
    return replace(options, fresh=True, replay=False) if cell.fresh else options


@dataclass(frozen=True)
class Chosen:
    """What the replay rule chose: a recording to replay (None: ask the model), the lines the cell shows
    first, and `refused`: the one line a cell prints when only replay was asked and there is none."""

    recording: Recording | None = None
    notes: tuple[str, ...] = ()
    refused: str = ""


@dataclass(frozen=True)
class Found:
    """The cell's own recording (see `replay.rule`), the notebook it was looked for in, other notes."""

    recording: Recording | None
    notebook: Path | None
    notes: tuple[str, ...] = ()


async def choose_recording(goat: GoatRuntime, prompt: str, options: RunOptions, cell: CellRun) -> Chosen:
    """Gather the facts of `replay.rule.decide` for this cell and act on its decision."""
    memory = goat.replays
    found = find_own(goat, prompt, cell) if not options.fresh else Found(None, None)
    own: Own = "none" if found.recording is None else "same" if found.recording.prompt == prompt else "edited"
    asked: Asked = "fresh" if options.fresh else "replay" if options.replay else None
    facts = ReplayFacts(
        asked, goat.session.settings.replay, own, memory.rerun(cell.cell_id, found.recording), True
    )
    missing: list[str] = []
    if needs_key_check(facts):
        missing = await missing_keys(goat, options)
        facts = replace(facts, key_usable=not missing)
    decision = decide(facts)
    if decision.action == "nothing":
        return Chosen(
            refused="%%goat: this cell holds no recording to replay; run it with --fresh to ask the model."
        )
    if decision.action == "model" or found.recording is None:
        return Chosen(notes=found.notes if own == "none" else ())
    return Chosen(found.recording, _why(decision.why, found.recording, missing))


def _why(why: str, recording: Recording, missing: list[str]) -> tuple[str, ...]:
    no_key = f"no model key is set ({' or '.join(missing)})"
    if why == "rerun_no_key":
        return (
            f"This cell ran before in this kernel, but {no_key}: replaying its recording. Set the key to ask the model.",
        )
    if why in ("edited_forced", "edited_no_key"):
        return (_changed_note(recording, "replay is set to always" if why == "edited_forced" else no_key),)
    return ()


def _changed_note(recording: Recording, why: str) -> str:
    first = recording.prompt.splitlines()[0] if recording.prompt else ""
    return (
        f"This cell's prompt changed since it was recorded, and {why}: replaying the recording of "
        f"“{first[:80]}”. Run fresh (or %%goat --fresh) to ask the model."
    )


def find_own(goat: GoatRuntime, prompt: str, cell: CellRun) -> Found:
    """The cell's own recording: by id in the kernel's notebook when the frontend names the cell; else
    (nbconvert, papermill) the next cell of this prompt there, then other notebooks the user opted in to."""
    notebook = running_notebook(goat.session.notebook_path, prompt)
    cells = read_cells(notebook) if notebook is not None else []
    if cell.cell_id is not None:
        return Found(next((c.recording for c in cells if c.cell_id == cell.cell_id), None), notebook)
    same = [c for c in cells if c.prompt == prompt]
    # The next cell of this prompt; past the last one, the last again (a re-run: the rule decides).
    mine = same[min(goat.replays.occurrence(prompt), len(same) - 1)].recording if same else None
    if mine is not None:
        return Found(mine, notebook)
    return _from_elsewhere(goat.session.cwd, notebook, prompt)


def _from_elsewhere(cwd: Path, notebook: Path | None, prompt: str) -> Found:
    """A recording of this prompt in a notebook the user opted in to; else a line naming the one not used."""
    chosen = opted_in(cwd, notebook)
    notes = tuple(
        f"{REPLAY_FROM_ENV} names {name}, which is not a notebook here: it was left out."
        for name in chosen.missing
    )
    for path in chosen.paths:
        match = next(
            (c.recording for c in read_cells(path) if c.recording and c.recording.prompt == prompt), None
        )
        if match is not None:
            return Found(match, notebook, notes)
    return Found(None, notebook, notes + _not_used(cwd, notebook, chosen.paths, prompt))


def _not_used(cwd: Path, notebook: Path | None, searched: list[Path], prompt: str) -> tuple[str, ...]:
    others = [p for p in folder_notebooks(cwd) if p != notebook and p not in searched]
    holder = next(
        (p for p in others if any(c.recording and c.recording.prompt == prompt for c in read_cells(p))), None
    )
    if holder is None:
        return ()
    where = (
        f"No recording of this cell in {notebook.name}"
        if notebook
        else "goat does not know which notebook this kernel runs"
    )
    return (
        f"{where}; {holder.name} holds one of this prompt, not used (a recording of another notebook "
        f"chose its own tool calls). {REPLAY_FROM_ENV}=folder, or the notebook's path, replays it.",
    )


async def missing_keys(goat: GoatRuntime, options: RunOptions) -> list[str]:
    """The key variables the cell's model needs and the environment lacks (none for a local endpoint)."""
    from goat_jupyter.agent.llm import litellm_module, llm_client_for
    from goat_jupyter.agent.provider_errors import missing_key_variables

    settings = goat.session.settings
    client = llm_client_for(settings, options.model or settings.model)
    return missing_key_variables(await litellm_module(), client.model, client.extra)
