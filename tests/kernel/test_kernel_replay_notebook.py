"""A %%goat cell's recording travels in the .ipynb: nbconvert and papermill re-run the notebook with no
model and no key, the tool calls run again for real, and a departure stops the replay at its step."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.recording import RECORDING_MIME
from goat_jupyter.ui.transcript import notebook_transcript
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import REPO_ROOT

pytestmark = pytest.mark.timeout(300)
DURATION = re.compile(r" · [0-9.]+s$")  # each call's time on its line
INSERTED = "print('made by goat', 6 * 7)"
PROMPT = "write the notes, read them back, add a cell to work.ipynb and run it"
TURNS = [
    {"text": "Writing the notes.", **tool_turn("Write", {"file_path": "notes.txt", "content": "one\ntwo\n"})},
    tool_turn("Read", {"file_path": "notes.txt"}),
    tool_turn("Read", {"file_path": "work.ipynb"}),  # NotebookEdit edits only a notebook it has read
    tool_turn(
        "NotebookEdit",
        {"notebook_path": "work.ipynb", "new_source": INSERTED, "cell_type": "code", "edit_mode": "insert"},
    ),
    tool_turn("RunCell", {"notebook_path": "work.ipynb", "cell_id": "cell-0"}),  # a new id differs each run
    text_turn("The notes say one and two; the new cell is in work.ipynb."),
]


def write_notebook(path: Path, goat_line: str = "%%goat") -> None:
    cells = [
        nbformat.v4.new_code_cell("%load_ext goat_jupyter"),  # pyright: ignore[reportUnknownMemberType]
        nbformat.v4.new_code_cell(f"{goat_line}\n{PROMPT}"),  # pyright: ignore[reportUnknownMemberType]
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)  # pyright: ignore[reportUnknownMemberType]


def fresh_workspace(folder: Path) -> None:
    (folder / "notes.txt").unlink(missing_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / "work.ipynb")  # pyright: ignore[reportUnknownMemberType]


def kernel_env(folder: Path, url: str, key: str | None, mode: str = "bypassPermissions") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_API_BASE"}
    env.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_API_BASE=url,
        GOAT_MODEL="openai/replay",
        GOAT_HOME=str(folder / "home"),
        GOAT_PERMISSION_MODE=mode,
    )
    if key:
        env["OPENAI_API_KEY"] = key
    return env


def execute(
    tool: str, folder: Path, source: str, target: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    if tool == "papermill":
        command = [sys.executable, "-m", "papermill", source, target, "--cwd", str(folder), "-k", "python3"]
    else:
        command = [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            source,
            "--output",
            target,
        ]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=240)


def recording_outputs(path: Path) -> list[dict[str, Any]]:
    cells = json.loads(path.read_text())["cells"]
    return [o for c in cells for o in c.get("outputs", []) if RECORDING_MIME in o.get("data", {})]


def body_of(transcript: str) -> str:
    """The transcript without the header (it says "replayed") and the footer (times and token counts)."""
    rows = [DURATION.sub("", row) for row in transcript.splitlines()]
    return "\n".join(
        r for r in rows if "replayed" not in r.lower() and "openai/replay" not in r and "── Done" not in r
    )


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Path]:
    """demo.ipynb run once against the scripted model, its outputs saved (with the recording)."""
    write_notebook(tmp_path / "source.ipynb")
    fresh_workspace(tmp_path)
    with ReplayServer(TURNS) as server:
        done = execute(
            "nbconvert", tmp_path, "source.ipynb", "demo.ipynb", kernel_env(tmp_path, server.url, "k" * 20)
        )
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == len(TURNS)
    (tmp_path / "source.ipynb").unlink()
    yield tmp_path


def unreachable() -> ReplayServer:
    """A model server with nothing to say: any request reaching it is a failure of the replay."""
    return ReplayServer([])


def test_the_recording_is_small_and_holds_no_output_and_no_key(recorded: Path) -> None:
    outputs = recording_outputs(recorded / "demo.ipynb")
    assert len(outputs) == 1
    recording = outputs[0]["data"][RECORDING_MIME]
    assert recording["prompt"] == PROMPT and recording["model"] == "openai/replay"
    assert [c["name"] for t in recording["turns"] for c in t.get("tool_calls", [])] == [
        "Write",
        "Read",
        "Read",
        "NotebookEdit",
        "RunCell",
    ]
    text = json.dumps(recording)
    assert "k" * 20 not in text and "1\tone" not in text and "1→one" not in text  # no key, no Read output
    assert len(text) < 2000
    assert (
        notebook_transcript(json.loads((recorded / "demo.ipynb").read_text())).count("recorded session") == 0
    )


@pytest.mark.parametrize("tool", ["nbconvert", "papermill"])
def test_run_all_replays_without_model_or_key(recorded: Path, tool: str) -> None:
    fresh_workspace(recorded)
    with unreachable() as model:
        done = execute(tool, recorded, "demo.ipynb", "again.ipynb", kernel_env(recorded, model.url, None))
        assert done.returncode == 0, done.stderr
        assert model.requests == []
    assert (recorded / "notes.txt").read_text() == "one\ntwo\n"
    work = nbformat.read(recorded / "work.ipynb", as_version=4)  # pyright: ignore[reportUnknownMemberType]
    assert [c.source for c in work.cells] == [INSERTED]
    before = notebook_transcript(json.loads((recorded / "demo.ipynb").read_text()))
    after = notebook_transcript(json.loads((recorded / "again.ipynb").read_text()))
    assert body_of(after) == body_of(before)
    assert "replayed" in after and "The notes say one and two" in after
    [again], [made] = recording_outputs(recorded / "again.ipynb"), recording_outputs(recorded / "demo.ipynb")
    assert again["data"] == made["data"]  # the same recording, now marked as replayed (Run fresh shows)
    assert again["metadata"]["goat"] == {"transcript": "", "replayed": True}
    assert made["metadata"]["goat"] == {"transcript": ""}


def test_a_changed_file_stops_the_replay_at_the_read_in_one_line(recorded: Path) -> None:
    fresh_workspace(recorded)
    (recorded / "notes.txt").write_text("someone else's notes\n")
    (recorded / "notes.txt").chmod(0o444)  # the recorded Write now fails: first departure
    with unreachable() as model:
        done = execute(
            "nbconvert", recorded, "demo.ipynb", "again.ipynb", kernel_env(recorded, model.url, None)
        )
        assert model.requests == []
    assert done.returncode != 0
    assert (
        "Replay stopped at step 1.1 (Write notes.txt): it failed where the recording succeeded" in done.stderr
    )
    assert not (recorded / "again.ipynb").exists() or INSERTED not in (recorded / "work.ipynb").read_text()


def test_a_read_that_differs_stops_the_replay_there(recorded: Path) -> None:
    demo = json.loads((recorded / "demo.ipynb").read_text())
    cell = demo["cells"][1]
    recording = next(o for o in cell["outputs"] if RECORDING_MIME in o.get("data", {}))["data"][
        RECORDING_MIME
    ]
    recording["turns"][0]["tool_calls"][0]["arguments"]["content"] = "changed\n"  # Read then differs
    (recorded / "demo.ipynb").write_text(json.dumps(demo))
    fresh_workspace(recorded)
    with unreachable() as model:
        done = execute(
            "nbconvert", recorded, "demo.ipynb", "again.ipynb", kernel_env(recorded, model.url, None)
        )
        assert model.requests == []
    assert done.returncode != 0
    line = next(row for row in done.stderr.splitlines() if "Replay stopped" in row)
    # In words, what changed: the recorded Write now writes one line where the Read had read two.
    assert (
        "step 2.1 (Read notes.txt): its result changed since the recording (1 line now, 2 lines recorded)"
        in line
    )
    assert "digest" not in line and "Run fresh" in line
    assert INSERTED not in (recorded / "work.ipynb").read_text()  # stopped before the NotebookEdit


def test_fresh_asks_the_model_instead(recorded: Path) -> None:
    demo = json.loads((recorded / "demo.ipynb").read_text())
    demo["cells"][1]["source"] = f"%%goat --fresh\n{PROMPT}"
    (recorded / "demo.ipynb").write_text(json.dumps(demo))
    fresh_workspace(recorded)
    with ReplayServer([text_turn("A new answer from the model.")]) as model:
        done = execute(
            "nbconvert", recorded, "demo.ipynb", "again.ipynb", kernel_env(recorded, model.url, "k" * 20)
        )
        assert done.returncode == 0, done.stderr
        assert len(model.requests) == 1
    assert "A new answer from the model." in notebook_transcript(
        json.loads((recorded / "again.ipynb").read_text())
    )
    assert not (recorded / "notes.txt").exists()


def test_an_edited_recording_cannot_raise_the_permission_mode_or_add_a_hook(recorded: Path) -> None:
    demo = json.loads((recorded / "demo.ipynb").read_text())
    output = next(o for o in demo["cells"][1]["outputs"] if RECORDING_MIME in o.get("data", {}))
    recording = output["data"][RECORDING_MIME]
    recording.update(permission_mode="bypassPermissions", settings={"permission_mode": "bypassPermissions"})
    recording["hooks"] = {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch hooked"}]}]}
    output["metadata"]["goat"]["permission_mode"] = "bypassPermissions"
    (recorded / "demo.ipynb").write_text(json.dumps(demo))
    fresh_workspace(recorded)
    with unreachable() as model:
        done = execute(
            "nbconvert",
            recorded,
            "demo.ipynb",
            "again.ipynb",
            kernel_env(recorded, model.url, None, "default"),
        )
        assert model.requests == []
    assert not (recorded / "hooked").exists()
    assert INSERTED not in (recorded / "work.ipynb").read_text()  # default mode, headless: refused
    assert "Replay stopped at step 4.1 (NotebookEdit" in done.stderr
    assert "it failed where the recording succeeded" in done.stderr


SIBLING_NOTE = "demo.ipynb holds one of this prompt, not used"


@pytest.mark.parametrize("key", ["k" * 20, None])
def test_nbconvert_never_replays_a_sibling_notebooks_recording(recorded: Path, key: str | None) -> None:
    """Point 32.14: the user's fresh.ipynb, beside demo.ipynb whose recording holds the same prompt. The
    sibling's calls never run; with a key the model answers, without one the cell says why nothing ran."""
    write_notebook(recorded / "fresh.ipynb")
    fresh_workspace(recorded)
    with ReplayServer([text_turn("The model's own answer.")]) as model:
        done = execute(
            "nbconvert", recorded, "fresh.ipynb", "out.ipynb", kernel_env(recorded, model.url, key)
        )
        assert done.returncode == 0, done.stderr
        assert len(model.requests) == (1 if key else 0)
    transcript = notebook_transcript(json.loads((recorded / "out.ipynb").read_text()))
    assert not (recorded / "notes.txt").exists() and "replayed" not in transcript
    assert SIBLING_NOTE in transcript and "GOAT_REPLAY_FROM=folder" in transcript
    assert ("The model's own answer." in transcript) == bool(key)
    if key is None:
        assert "OPENAI_API_KEY" in transcript


@pytest.mark.parametrize(("tool", "opt_in"), [("nbconvert", "folder"), ("papermill", "demo.ipynb")])
def test_the_user_may_opt_in_to_another_notebooks_recording(recorded: Path, tool: str, opt_in: str) -> None:
    write_notebook(recorded / "fresh.ipynb")
    fresh_workspace(recorded)
    env = kernel_env(recorded, "http://127.0.0.1:9/v1", None) | {"GOAT_REPLAY_FROM": opt_in}
    with unreachable() as model:
        done = execute(tool, recorded, "fresh.ipynb", "out.ipynb", env | {"OPENAI_API_BASE": model.url})
        assert done.returncode == 0, done.stderr
        assert model.requests == []
    assert (recorded / "notes.txt").read_text() == "one\ntwo\n"
    assert "replayed" in notebook_transcript(json.loads((recorded / "out.ipynb").read_text()))
