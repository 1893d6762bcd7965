"""A real kernel: a %%goat cell finds its recording in the notebook beside it and replays it; the
replay setting, --replay and --fresh decide when the model is asked instead."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.recording import RECORDING_MIME, RecordedTurn, Recording, recording_bundle
from tests.agent_helpers import text_turn
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
