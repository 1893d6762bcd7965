"""Where a cell's recording may come from (goat_jupyter.replay.notebooks): the notebook nbconvert or
papermill was told to run (read from the runner's command line, with real processes), and other notebooks
only when GOAT_REPLAY_FROM opts in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.replay.notebooks import (
    REPLAY_FROM_ENV,
    cell_prompt,
    opted_in,
    read_cells,
    running_notebook,
)
from goat_jupyter.replay.recording import RecordedTurn, Recording, recording_bundle
from tests.kernel_harness import REPO_ROOT


def goat_notebook(path: Path, prompt: str, answer: str | None = None) -> None:
    cell = nbformat.v4.new_code_cell(f"%%goat\n{prompt}")  # pyright: ignore[reportUnknownMemberType]
    if answer is not None:
        bundle = recording_bundle(Recording(model="m", prompt=prompt, turns=[RecordedTurn(text=answer)]))
        assert bundle is not None
        cell.outputs = [nbformat.v4.new_output("display_data", bundle[0], metadata=bundle[1])]  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)  # pyright: ignore[reportUnknownMemberType]


@pytest.mark.parametrize(
    ("source", "prompt"),
    [
        ("%%goat\nsay hi", "say hi"),
        ("%%goat --fresh --max-turns 3\n  say hi  \n", "say hi"),
        ("\n\n  %%goat\r\nsay hi\r\n", "say hi"),
        ("%%goat", ""),
        ("%%goatee\nsay hi", None),
        ("%goat status", None),
        ("print('%%goat')\nsay hi", None),
        ("# %%goat\nsay hi", None),
    ],
)
def test_a_goat_cells_prompt_in_every_spelling(source: str, prompt: str | None) -> None:
    assert cell_prompt(source) == prompt


@given(st.text(max_size=200))
def test_any_source_gives_a_prompt_or_none_and_never_raises(source: str) -> None:
    found = cell_prompt(source)
    assert found is None or source.lstrip().startswith("%%goat")


def test_an_unreadable_or_hostile_notebook_gives_no_cells(tmp_path: Path) -> None:
    (tmp_path / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "list.ipynb").write_text(json.dumps({"cells": {"not": "a list"}}))
    (tmp_path / "odd.ipynb").write_text(json.dumps({"cells": [1, "x", {"source": ["%%goat\n", "hi"]}]}))
    for name in ("deep", "bad", "list", "missing"):
        assert read_cells(tmp_path / f"{name}.ipynb") == []
    [odd] = read_cells(tmp_path / "odd.ipynb")
    assert odd.prompt == "hi" and odd.recording is None


RUNNER = """
import subprocess, sys
sys.exit(subprocess.call([sys.executable, "-c", {child!r}]))
"""
CHILD = (
    "import json; from pathlib import Path; from goat_jupyter.replay.notebooks import runner_notebooks, "
    "running_notebook; print(json.dumps([[str(p) for p in runner_notebooks()], "
    "str(running_notebook(None, 'say hi'))]))"
)


def run_as_runner(folder: Path, argv: list[str], env: dict[str, str] | None = None) -> tuple[list[str], str]:
    """What a kernel started by a process with this command line finds (a real parent process)."""
    script = folder / "runner.py"
    script.write_text(RUNNER.format(child=CHILD))
    environ = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"} | (env or {})
    environ["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        [sys.executable, str(script), *argv],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found, running = json.loads(done.stdout)
    return [Path(p).name for p in found], Path(running).name if running != "None" else ""


def test_the_runners_command_line_names_the_notebook_and_never_its_output(tmp_path: Path) -> None:
    goat_notebook(tmp_path / "demo.ipynb", "say hi", "from demo")
    goat_notebook(tmp_path / "again.ipynb", "say hi", "from an earlier output")
    goat_notebook(tmp_path / "sibling.ipynb", "say hi", "from a sibling")
    # nbconvert: --output's value is the output, in either order; papermill: the input comes first.
    nbconvert = ["--to", "notebook", "--output", "again.ipynb", "--execute", "demo.ipynb"]
    assert run_as_runner(tmp_path, nbconvert) == (["demo.ipynb"], "demo.ipynb")
    assert run_as_runner(tmp_path, ["--output=again.ipynb", "demo.ipynb"]) == (["demo.ipynb"], "demo.ipynb")
    assert run_as_runner(tmp_path, ["demo.ipynb", "again.ipynb", "--cwd", "."])[1] == "demo.ipynb"
    # A notebook named but missing, or none named: no notebook, and never a sibling of the folder.
    assert run_as_runner(tmp_path, ["gone.ipynb"]) == ([], "")
    assert run_as_runner(tmp_path, []) == ([], "")
    # A Jupyter server's kernel names its notebook itself: the command line is not read.
    assert run_as_runner(tmp_path, ["demo.ipynb"], {"JPY_SESSION_NAME": "Console 1"}) == (["demo.ipynb"], "")


def test_of_several_notebooks_named_the_first_holding_the_prompt_runs(tmp_path: Path) -> None:
    goat_notebook(tmp_path / "a.ipynb", "something else")
    goat_notebook(tmp_path / "b.ipynb", "say hi")
    assert run_as_runner(tmp_path, ["a.ipynb", "b.ipynb"])[1] == "b.ipynb"


def test_a_notebook_the_frontend_named_wins_when_it_exists(tmp_path: Path) -> None:
    goat_notebook(tmp_path / "lab.ipynb", "x")
    assert running_notebook(tmp_path / "lab.ipynb", "say hi") == tmp_path / "lab.ipynb"
    assert running_notebook(tmp_path / "unsaved.ipynb", "say hi") is None


def test_the_opt_in_takes_the_folder_or_named_notebooks_and_says_what_is_missing(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        goat_notebook(tmp_path / f"{name}.ipynb", "x")
    (tmp_path / "notes.txt").write_text("not a notebook")
    (tmp_path / "dir.ipynb").mkdir()
    running = (tmp_path / "a.ipynb").resolve()
    assert opted_in(tmp_path, running, {}).paths == []
    folder = opted_in(tmp_path, running, {REPLAY_FROM_ENV: "folder"})
    assert [p.name for p in folder.paths] == ["b.ipynb", "c.ipynb"] and folder.missing == []
    named = opted_in(
        tmp_path,
        running,
        {REPLAY_FROM_ENV: os.pathsep.join(["c.ipynb", "a.ipynb", "gone.ipynb", "notes.txt", "dir.ipynb"])},
    )
    assert [p.name for p in named.paths] == ["c.ipynb"]
    assert named.missing == ["gone.ipynb", "notes.txt", "dir.ipynb"]
