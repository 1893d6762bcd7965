"""The saved notebook is the audit trail: a real kernel run with approvals and a revert, written to
.ipynb the way JupyterLab saves outputs, then converted with nbconvert to HTML and Markdown."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import CellResult, KernelSession, prepare_workspace, replay_kernel_env, wait_for
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = pytest.mark.timeout(300)
LONG_COMMAND = "echo " + " ".join(f"argument-number-{i}" for i in range(20)) + " > long.txt"
INSERTED = "print('inserted by goat')"
TURNS = [
    tool_turn("Read", {"file_path": "notes.txt", "limit": 2}),  # its hint for the model stays out of view
    tool_turn("Read", {"file_path": "notes.txt"}),  # the whole file: Write refuses after a partial Read
    tool_turn("Write", {"file_path": "notes.txt", "content": "rewritten line\n"}),
    tool_turn(
        "NotebookEdit",
        {"notebook_path": "nb.ipynb", "new_source": INSERTED, "cell_type": "code", "edit_mode": "insert"},
    ),
    tool_turn("Bash", {"command": LONG_COMMAND}),
    text_turn("All done."),
    text_turn("Understood, back to the old notes.", match="[after-revert]"),
]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[KernelSession, ReplayServer, FakeNotebookFrontend]]:
    prepare_workspace(tmp_path)
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "nb.ipynb")  # pyright: ignore[reportUnknownMemberType]
    with ReplayServer(TURNS) as server:
        env = replay_kernel_env(tmp_path / "home", server.url, mode="default")
        async with KernelSession(tmp_path, env) as kernel:
            loaded = await kernel.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.messages
            cells = [new_cell("code", "%%goat\nrewrite the notes")]
            frontend = FakeNotebookFrontend("nb.ipynb", cells, server_root=str(tmp_path)).attach(kernel)
            yield kernel, server, frontend


def outputs_of(result: CellResult) -> list[dict[str, Any]]:
    """The cell's outputs as JupyterLab keeps them: each display at its place with its last update."""
    outputs: list[dict[str, Any]] = []
    where: dict[str, int] = {}
    for msg in result.messages:
        kind, content = msg["header"]["msg_type"], msg["content"]
        display_id = content.get("transient", {}).get("display_id")
        if kind == "display_data":
            if display_id:
                where[display_id] = len(outputs)
            outputs.append(
                nbformat.v4.new_output("display_data", content["data"], metadata=content["metadata"])
            )  # pyright: ignore[reportUnknownMemberType]
        elif kind == "update_display_data" and display_id in where:
            outputs[where[display_id]]["data"] = content["data"]
            outputs[where[display_id]]["metadata"] = content["metadata"]
        elif kind == "stream":
            outputs.append(nbformat.v4.new_output("stream", name=content["name"], text=content["text"]))  # pyright: ignore[reportUnknownMemberType]
        elif kind == "error":
            outputs.append(nbformat.v4.new_output("error", **content))  # pyright: ignore[reportUnknownMemberType]
    return outputs


def apply_replacements(outputs: list[dict[str, Any]], frontend: FakeNotebookFrontend) -> None:
    """What the labextension does with `replace_goat_output` (src/goat_outputs.ts, replaceTagged)."""
    for request in frontend.replaced_outputs:
        for index, output in enumerate(outputs):
            if output.get("metadata", {}).get("goat", {}).get("key") == request["key"]:
                outputs[index] = nbformat.v4.new_output("display_data", request["data"])  # pyright: ignore[reportUnknownMemberType]


def _around(text: str, needle: str) -> str:
    at = text.find(needle)
    return text[max(at - 120, 0) : at + 120]


def convert(notebook: Path, to: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", to, "--stdout", str(notebook)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


async def allow_three(kernel: KernelSession) -> None:
    for _ in range(3):
        button = await kernel.wait_widget("ButtonModel", timeout=90, description="Allow once")
        kernel.click(button)
        await wait_for(lambda b=button: b not in kernel.widgets("ButtonModel"), 30)


async def test_saved_notebook_keeps_what_was_approved_and_the_revert(
    rig: tuple[KernelSession, ReplayServer, FakeNotebookFrontend], tmp_path: Path
) -> None:
    import asyncio

    kernel, server, frontend = rig
    goat_cell = frontend.cells()[0]
    cell = asyncio.ensure_future(
        kernel.execute(goat_cell["source"], timeout=180, metadata={"cellId": goat_cell["id"]})
    )
    await allow_three(kernel)
    result = await cell
    assert result.status == "ok", result.error
    assert (tmp_path / "notes.txt").read_text() == "rewritten line\n"

    revert = await kernel.wait_widget("ButtonModel", description="Revert this run")
    kernel.click(revert)
    await kernel.pump(lambda: bool(frontend.replaced_outputs), timeout=60)
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\nfour\nfive\n"
    assert [c["source"] for c in frontend.cells()] == [goat_cell["source"]], "the inserted cell is gone"

    after = await kernel.execute("%%goat\n[after-revert] what now?", timeout=120)
    assert after.status == "ok", after.error
    last_prompt = json.dumps(server.requests[-1]["messages"])
    assert "The user reverted the changes of %%goat run 1" in last_prompt

    outputs = outputs_of(result)
    apply_replacements(outputs, frontend)
    code = nbformat.v4.new_code_cell(goat_cell["source"], outputs=outputs)  # pyright: ignore[reportUnknownMemberType]
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[code]), saved)  # pyright: ignore[reportUnknownMemberType]
    for to in ("html", "markdown"):
        text = convert(saved, to)
        assert "rewritten line" in text and "-one" in text, f"{to}: the Write's diff"
        assert "inserted by goat" in text, f"{to}: the inserted source"
        assert LONG_COMMAND.replace(">", "&gt;") in text or LONG_COMMAND in text, f"{to}: the full command"
        # The Bash command's effects stay: the record's headline says the revert was partial.
        assert "Partly reverted %%goat run 1" in text, f"{to}: the revert record"
        for bad in ("HBox(", "model not found", "call Read with offset", "Button("):
            assert bad not in text, f"{to} shows {bad!r}"
        # Approvals, diff headers and the revert record name files relative to the workspace.
        assert str(tmp_path) not in text, f"{to} shows the author's folder: {_around(text, str(tmp_path))}"
        assert "notes.txt" in text
    check_text_transcript(convert(saved, "goat_jupyter.ui.export.TranscriptExporter"))


def check_text_transcript(text: str) -> None:
    """`--to goat`: each call one line with its argument and result, the revert record, no markup."""
    lines = text.splitlines()
    for call in (
        "Read(notes.txt)",
        "Write(notes.txt)",
        "NotebookEdit(nb.ipynb)",
        "Bash(echo argument-number-0",
    ):
        assert len([line for line in lines if line.startswith(f"✓ {call}")]) == (
            2 if "Read" in call else 1
        ), text
    assert "Partly reverted %%goat run 1" in text and "All done." in text
    assert "<" not in text.replace("<<", "") and "style=" not in text and "\n\n\n" not in text, text
