"""A real kernel: a %%goat cell finds its recording in the notebook beside it and replays it; the
replay setting, --replay and --fresh decide when the model is asked instead."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.recording import RECORDING_MIME, RecordedTurn, Recording, recording_bundle
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import CellResult, KernelSession, replay_kernel_env

pytestmark = pytest.mark.timeout(300)
RECORDED = Recording(model="gpt-orig", prompt="say hi", turns=[RecordedTurn(text="Hi from the recording.")])


def notebook_with_recording(path: Path) -> None:
    bundle = recording_bundle(RECORDED)
    assert bundle is not None
    data, metadata = bundle
    cell = nbformat.v4.new_code_cell("%%goat\nsay hi")  # pyright: ignore[reportUnknownMemberType]
    cell.outputs = [nbformat.v4.new_output("display_data", data, metadata=metadata)]  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)  # pyright: ignore[reportUnknownMemberType]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[KernelSession, ReplayServer]]:
    notebook_with_recording(tmp_path / "lesson.ipynb")
    with ReplayServer([text_turn("Hi from the model."), text_turn("Again from the model.")]) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            yield kernel, server


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
        env = replay_kernel_env(tmp_path / "home", server.url)
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
            again = await kernel.execute("%%goat\n[top] delegate it", timeout=120)
            assert again.status == "ok", again.error
            assert len(server.requests) == asked, "the replay asked no model"
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
        env = replay_kernel_env(tmp_path / "home", server.url)
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            recorded = await kernel.execute("%%goat\n[read] what does notes.txt say", timeout=120)
            keep_recording_of(recorded, "[read] what does notes.txt say", tmp_path / "made.ipynb")
            (tmp_path / "notes.txt").write_text("B\n")  # the recorded Read now reads something else
            assert (await kernel.execute("%goat reset")).status == "ok"
            stopped = await kernel.execute("%%goat\n[read] what does notes.txt say", timeout=120)
            assert stopped.status == "error" and "Replay stopped at step 1.1 (Read)" in str(stopped.error)
            assert "--fresh to go on from there" in str(stopped.error)
            asked = len(server.requests)
            fresh = await kernel.execute("%%goat --fresh\n[read] what does notes.txt say", timeout=120)
            assert fresh.status == "ok", fresh.error
            assert "Now it says B." in shown(fresh)
            # One request, which holds the replayed Read and its new result: no restart from the prompt.
            [request] = server.requests[asked:]
            roles = [m["role"] for m in request["messages"] if m["role"] != "system"]
            tool_results = [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]
            assert roles.count("user") >= 2 and "B" in tool_results[-1]
            assert "Replay stopped at step 1.1 (Read)" in str(request["messages"][-1]["content"])
            # The new recording holds the whole run and replays cleanly on the changed file.
            keep_recording_of(fresh, "[read] what does notes.txt say", tmp_path / "made.ipynb")
            assert (await kernel.execute("%goat reset")).status == "ok"
            again = await kernel.execute("%%goat\n[read] what does notes.txt say", timeout=120)
            assert again.status == "ok", again.error
            assert "Now it says B." in shown(again) and len(server.requests) == asked + 1


async def test_auto_replays_a_changed_prompts_recording_only_when_no_key_is_set(
    rig: tuple[KernelSession, ReplayServer], tmp_path: Path
) -> None:
    kernel, server = rig
    cell_id = nbformat.read(tmp_path / "lesson.ipynb", 4).cells[0]["id"]  # pyright: ignore[reportUnknownMemberType]
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
