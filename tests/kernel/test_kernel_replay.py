"""A real kernel acting as JupyterLab does (the notebook named by JPY_SESSION_NAME, each cell by its id):
the replay rule (goat_jupyter.replay.rule) decides when a %%goat cell replays its recording and when it
asks the model: a first run replays, a re-run in the kernel that made or played the recording asks, a new
cell with another cell's prompt asks, the Run fresh button asks; the replay setting, --replay and --fresh."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.recording import RECORDING_MIME, RecordedTurn, Recording, recording_bundle
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import CellResult, KernelSession, replay_kernel_env

pytestmark = pytest.mark.timeout(300)
RECORDED = Recording(model="gpt-orig", prompt="say hi", turns=[RecordedTurn(text="Hi from the recording.")])
CELL = "c-lesson"  # the id of lesson.ipynb's %%goat cell
NEW_CELL = "c-new"


def notebook_with_recording(path: Path, recording: Recording | None = RECORDED, cell_id: str = CELL) -> None:
    """A saved notebook whose one %%goat cell holds `recording` as its output (as JupyterLab saves it)."""
    cell = nbformat.v4.new_code_cell(f"%%goat\n{recording.prompt if recording else 'say hi'}")  # pyright: ignore[reportUnknownMemberType]
    cell["id"] = cell_id
    if recording is not None:
        bundle = recording_bundle(recording)
        assert bundle is not None
        cell.outputs = [nbformat.v4.new_output("display_data", bundle[0], metadata=bundle[1])]  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)  # pyright: ignore[reportUnknownMemberType]


def lab_env(folder: Path, url: str) -> dict[str, str]:
    """A kernel as JupyterLab starts it for lesson.ipynb (jupyter_server sets JPY_SESSION_NAME)."""
    return replay_kernel_env(folder / "home", url) | {"JPY_SESSION_NAME": "lesson.ipynb"}


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[KernelSession, ReplayServer]]:
    notebook_with_recording(tmp_path / "lesson.ipynb")
    turns = [
        text_turn("Hi from the model."),
        text_turn("Again from the model."),
        text_turn("Third from the model."),
    ]
    with ReplayServer(turns) as server:
        async with KernelSession(tmp_path, lab_env(tmp_path, server.url)) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            yield kernel, server


async def run(kernel: KernelSession, source: str, cell_id: str, **metadata: object) -> CellResult:
    return await kernel.execute(source, timeout=90, metadata={"cellId": cell_id, **metadata})


def kept_recording(result: CellResult) -> dict[str, Any]:
    [kept] = [m for m in result.of_type("display_data") if RECORDING_MIME in m["content"]["data"]]
    return kept


async def test_run_all_from_disk_replays_then_a_rerun_asks_the_model(
    rig: tuple[KernelSession, ReplayServer],
) -> None:
    """A fresh kernel on a notebook with recordings (Run All): the cell replays, marked for Run fresh;
    Shift+Enter on it again in this kernel asks the model."""
    kernel, server = rig
    first = await run(kernel, "%%goat\nsay hi", CELL)
    assert first.status == "ok", first.error
    assert "Hi from the recording." in shown(first) and server.requests == []
    assert (
        "Replayed, no model asked · 1 turn · " in first.text()
        and "tokens" not in first.text().split("Replayed")[1]
    )
    assert kept_recording(first)["content"]["metadata"]["goat"]["replayed"] is True
    again = await run(kernel, "%%goat\nsay hi", CELL)
    assert "Hi from the model." in shown(again) and len(server.requests) == 1
    assert "replayed" not in kept_recording(again)["content"]["metadata"]["goat"]


async def test_a_rerun_of_a_cell_that_asked_the_model_asks_it_again(tmp_path: Path) -> None:
    """The issue's case: run a cell with the model, JupyterLab saves the notebook with the recording,
    Shift+Enter again: a new request, not the old answer. A copy of the cell (pasted with its outputs,
    a new id) holds a recording made here: it asks the model too."""
    notebook_with_recording(tmp_path / "lesson.ipynb", None)
    turns = [text_turn("First answer."), text_turn("Second answer."), text_turn("Third answer.")]
    with ReplayServer(turns) as server:
        async with KernelSession(tmp_path, lab_env(tmp_path, server.url)) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            first = await run(kernel, "%%goat\nsay hi", CELL)
            assert "First answer." in shown(first) and len(server.requests) == 1
            made = Recording.model_validate(kept_recording(first)["content"]["data"][RECORDING_MIME])
            notebook_with_recording(tmp_path / "lesson.ipynb", made)  # saved
            again = await run(kernel, "%%goat\nsay hi", CELL)
            assert again.status == "ok", again.error
            assert "Second answer." in shown(again) and "First answer." not in shown(again)
            assert len(server.requests) == 2 and "replayed" not in shown(again)
            notebook_with_recording(tmp_path / "lesson.ipynb", made, cell_id="c-pasted")
            pasted = await run(kernel, "%%goat\nsay hi", "c-pasted")
            assert "Third answer." in shown(pasted) and len(server.requests) == 3


async def test_a_new_cell_with_the_same_prompt_asks_the_model(
    rig: tuple[KernelSession, ReplayServer],
) -> None:
    kernel, server = rig
    new = await run(kernel, "%%goat\nsay hi", NEW_CELL)
    assert "Hi from the model." in shown(new) and "Hi from the recording." not in shown(new)
    assert len(server.requests) == 1
    assert (await kernel.execute('import os; os.environ.pop("OPENAI_API_KEY", None)')).status == "ok"
    no_key = await run(kernel, "%%goat\nsay hi", "c-newer")
    assert "Hi from the recording." not in shown(no_key) and "OPENAI_API_KEY" in shown(no_key)
    assert len(server.requests) == 1


async def test_the_run_fresh_button_asks_the_model_without_editing_the_magic_line(
    rig: tuple[KernelSession, ReplayServer],
) -> None:
    kernel, server = rig
    fresh = await run(kernel, "%%goat\nsay hi", CELL, goatFresh=True)
    assert "Hi from the model." in shown(fresh) and len(server.requests) == 1
    replay_asked = await run(kernel, "%%goat --replay\nsay hi", CELL, goatFresh=True)  # the button wins
    assert "Again from the model." in shown(replay_asked) and len(server.requests) == 2
    for spelling in ("true", 1, "yes"):  # only JSON true is the button
        other = await run(kernel, "%%goat --replay\nsay hi", CELL, goatFresh=spelling)
        assert "Hi from the recording." in shown(other)
    assert len(server.requests) == 2


async def test_without_a_key_a_rerun_replays_and_says_why(rig: tuple[KernelSession, ReplayServer]) -> None:
    """Offline demos: with no key a re-run replays the cell's own recording, with a line saying so."""
    kernel, server = rig
    assert (await run(kernel, "%%goat\nsay hi", CELL)).status == "ok"
    assert (await kernel.execute('import os; os.environ.pop("OPENAI_API_KEY", None)')).status == "ok"
    again = await run(kernel, "%%goat\nsay hi", CELL)
    assert again.status == "ok", again.error
    assert "Hi from the recording." in shown(again) and server.requests == []
    assert "ran before in this kernel" in shown(again) and "OPENAI_API_KEY" in shown(again)


def shown(result: CellResult) -> str:
    return result.text() + result.text("text/html")


async def test_a_recorded_prompt_replays_without_asking_the_model(
    rig: tuple[KernelSession, ReplayServer],
) -> None:
    kernel, server = rig
    result = await kernel.execute("%%goat\nsay hi", timeout=90)
    assert result.status == "ok", result.error
    assert "Hi from the recording." in shown(result) and "gpt-orig · replayed" in shown(result)
    # Each replayed answer says so, small, above its text; the text itself (and the transcript) is unchanged.
    assert "<sub>↻ replayed from gpt-orig</sub>" in result.text("text/markdown")
    assert "replayed from" not in result.text("text/plain")
    assert server.requests == []
    kept = [m for m in result.of_type("display_data") if RECORDING_MIME in m["content"]["data"]]
    assert [m["content"]["data"][RECORDING_MIME]["prompt"] for m in kept] == ["say hi"]


async def test_fresh_and_never_ask_the_model(rig: tuple[KernelSession, ReplayServer]) -> None:
    kernel, server = rig
    fresh = await kernel.execute("%%goat --fresh\nsay hi", timeout=90)
    assert "Hi from the model." in shown(fresh) and len(server.requests) == 1
    assert (await kernel.execute("%goat config replay=never")).status == "ok"
    never = await kernel.execute("%%goat\nsay hi", timeout=90)
    assert "Again from the model." in shown(never) and len(server.requests) == 2


async def test_replay_without_a_recording_asks_nothing(rig: tuple[KernelSession, ReplayServer]) -> None:
    kernel, server = rig
    result = await kernel.execute("%%goat --replay\nsay something else", timeout=90)
    assert "holds no recording to replay" in result.stdout
    assert (await kernel.execute("%goat config replay=always")).status == "ok"
    always = await kernel.execute("%%goat\nsay something else", timeout=90)
    assert "holds no recording to replay" in always.stdout
    both = await kernel.execute("%%goat --replay --fresh\nsay hi", timeout=90)
    assert "not allowed with argument" in both.stdout
    assert server.requests == []


SUB_PROMPT = "[sub] write sub.txt"
AGENT_TURNS = [
    tool_turn(
        "Agent",
        {"description": "write the file", "prompt": SUB_PROMPT, "subagent_type": "general-purpose"},
        match="[top]",
    ),
    tool_turn("Write", {"file_path": "sub.txt", "content": "from the subagent\n"}, match="[sub]"),
    text_turn("The subagent wrote sub.txt.", match="[sub]"),
    text_turn("Done: the subagent wrote it.", match="[top]"),
]


async def test_a_run_with_a_subagent_replays_the_subagent_too(tmp_path: Path) -> None:
    """The subagent's own answers are recorded with the cell and replayed to the subagent (not to the
    top level): the file it wrote is written again and the cell says the same, with no model."""
    with ReplayServer(AGENT_TURNS) as server:
        env = replay_kernel_env(tmp_path / "home", server.url) | {"JPY_SESSION_NAME": "made.ipynb"}
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            first = await kernel.execute("%%goat\n[top] delegate it", timeout=120)
            assert first.status == "ok", first.error
            asked = len(server.requests)
            (tmp_path / "sub.txt").unlink()
            [kept] = [m for m in first.of_type("display_data") if RECORDING_MIME in m["content"]["data"]]
            recording = kept["content"]["data"][RECORDING_MIME]
            assert [agent["prompt"] for agent in recording["agents"]] == [SUB_PROMPT]
            cell = nbformat.v4.new_code_cell("%%goat\n[top] delegate it")  # pyright: ignore[reportUnknownMemberType]
            cell.outputs = [nbformat.v4.new_output("display_data", kept["content"]["data"])]  # pyright: ignore[reportUnknownMemberType]
            nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "made.ipynb")  # pyright: ignore[reportUnknownMemberType]
            assert (await kernel.execute("%goat reset")).status == "ok"
            again = await kernel.execute("%%goat --replay\n[top] delegate it", timeout=120)
            assert again.status == "ok", again.error
            assert len(server.requests) == asked, "the replay asked no model"
            assert (tmp_path / "sub.txt").exists(), shown(again)
            assert (tmp_path / "sub.txt").read_text() == "from the subagent\n"
            assert "Done: the subagent wrote it." in shown(again) and "replayed" in shown(again)


READ_TURNS = [
    tool_turn("Read", {"file_path": "notes.txt"}, match="[read]"),
    text_turn("It says A.", match="[read]"),
    text_turn("Now it says B.", match="[Note from goat"),
]


def keep_recording_of(result: CellResult, prompt: str, path: Path) -> None:
    [kept] = [m for m in result.of_type("display_data") if RECORDING_MIME in m["content"]["data"]]
    cell = nbformat.v4.new_code_cell(f"%%goat\n{prompt}")  # pyright: ignore[reportUnknownMemberType]
    cell.outputs = [nbformat.v4.new_output("display_data", kept["content"]["data"])]  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)  # pyright: ignore[reportUnknownMemberType]


async def test_fresh_after_a_departure_goes_on_from_the_step_that_departed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("A\n")
    with ReplayServer(READ_TURNS) as server:
        env = replay_kernel_env(tmp_path / "home", server.url) | {"JPY_SESSION_NAME": "made.ipynb"}
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            recorded = await kernel.execute("%%goat\n[read] what does notes.txt say", timeout=120)
            keep_recording_of(recorded, "[read] what does notes.txt say", tmp_path / "made.ipynb")
            (tmp_path / "notes.txt").write_text("B\n")  # the recorded Read now reads something else
            assert (await kernel.execute("%goat reset")).status == "ok"
            stopped = await kernel.execute("%%goat --replay\n[read] what does notes.txt say", timeout=120)
            error = stopped.error
            assert stopped.status == "error" and error is not None
            [line] = error["content"]["traceback"]
            assert line.startswith(
                "⊘ Replay stopped at step 1.1 (Read notes.txt): its result changed since the recording (still 1 line"
            ), "one line in words, no colour code"
            assert line.endswith(
                ", but not the same content). Run fresh (the button below, or %%goat --fresh) goes on from "
                "there with the model."
            )
            assert "\x1b" not in line
            assert "Replay stopped · 2 turns · " in stopped.text() and "Done" not in stopped.text()
            asked = len(server.requests)
            fresh = await kernel.execute("%%goat --fresh\n[read] what does notes.txt say", timeout=120)
            assert fresh.status == "ok", fresh.error
            assert "Now it says B." in shown(fresh)
            # One request, which holds the replayed Read and its new result: no restart from the prompt.
            [request] = server.requests[asked:]
            roles = [m["role"] for m in request["messages"] if m["role"] != "system"]
            tool_results = [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]
            assert roles.count("user") >= 2 and "B" in tool_results[-1]
            note = str(request["messages"][-1]["content"])
            assert "Replay stopped at step 1.1 (Read notes.txt)" in note and "Run fresh" not in note
            # The new recording holds the whole run and replays cleanly on the changed file.
            keep_recording_of(fresh, "[read] what does notes.txt say", tmp_path / "made.ipynb")
            assert (await kernel.execute("%goat reset")).status == "ok"
            again = await kernel.execute("%%goat --replay\n[read] what does notes.txt say", timeout=120)
            assert again.status == "ok", again.error
            assert "Now it says B." in shown(again) and len(server.requests) == asked + 1


async def test_auto_replays_a_changed_prompts_recording_only_when_no_key_is_set(
    rig: tuple[KernelSession, ReplayServer], tmp_path: Path
) -> None:
    kernel, server = rig
    cell_id = CELL
    changed = "%%goat\nsay hi, but louder"
    with_key = await kernel.execute(changed, timeout=90, metadata={"cellId": cell_id})
    assert "Hi from the model." in shown(with_key) and len(server.requests) == 1, "a key: the model answers"
    assert (await kernel.execute('import os; os.environ.pop("OPENAI_API_KEY", None)')).status == "ok"
    no_key = await kernel.execute(changed, timeout=90, metadata={"cellId": cell_id})
    assert no_key.status == "ok", no_key.error
    assert "Hi from the recording." in shown(no_key) and len(server.requests) == 1
    assert "prompt changed since it was recorded" in shown(no_key) and "OPENAI_API_KEY" in shown(no_key)
    other = await kernel.execute(changed, timeout=90, metadata={"cellId": "another-cell"})
    assert "Hi from the recording." not in shown(other), "only the cell's own recording stands in"
