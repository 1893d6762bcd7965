"""The live notebook in a real kernel: jupyter_client is the frontend and answers `goat.notebook`.

One kernel serves the live-notebook tests (each cell starts a fresh session with `--new` and its
scripted turns match a tag); the fallback tests get a kernel of their own, because the user is
told about a missing bridge once per kernel. The headless test runs a notebook with nbclient.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import pytest_asyncio
from nbclient import NotebookClient

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import REPO_ROOT, CellResult, KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"


def edit(tag: str, **args: Any) -> dict[str, Any]:
    return tool_turn("NotebookEdit", {"notebook_path": NB, **args}, match=tag)


TURNS = [
    edit("[insert]", new_source="print('below')", cell_type="code", edit_mode="insert"),
    tool_turn("Read", {"file_path": NB}, match="[insert]"),
    edit("[insert]", cell_id="cell-0", new_source="x = 2"),
    text_turn("Inserted and replaced.", match="[insert]"),
    tool_turn("Read", {"file_path": NB}, match="[read]"),
    text_turn("Read it.", match="[read]"),
    tool_turn("Write", {"file_path": NB, "content": "{}"}, match="[write]"),
    text_turn("Could not write.", match="[write]"),
    tool_turn("Read", {"file_path": NB}, match="[conflict-1]"),
    text_turn("Read it.", match="[conflict-1]"),
    edit("[conflict-2]", cell_id="cell-0", new_source="x = 'agent'"),
    text_turn("Conflict seen.", match="[conflict-2]"),
    *[
        turn
        for mode in ("close",)
        for turn in (
            tool_turn("Read", {"file_path": NB}, match=f"[fallback-{mode}]"),
            edit(
                f"[fallback-{mode}]", new_source="# added on disk", cell_type="markdown", edit_mode="insert"
            ),
            edit(f"[fallback-{mode}]", new_source="# and again", cell_type="markdown", edit_mode="insert"),
            text_turn("Edited the file.", match=f"[fallback-{mode}]"),
            edit(f"[again-{mode}]", new_source="# third", cell_type="markdown", edit_mode="insert"),
            text_turn("Again on disk.", match=f"[again-{mode}]"),
        )
    ],
]


def write_notebook(path: Path, sources: list[str]) -> list[str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])  # pyright: ignore[reportUnknownMemberType]
    nbformat.write(nb, path)  # pyright: ignore[reportUnknownMemberType]
    return [str(cell.id) for cell in nb.cells]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("live")
    prepare_workspace(path)
    return path


async def start_kernel(workspace: Path, server: ReplayServer) -> KernelSession:
    session = KernelSession(
        workspace, replay_kernel_env(workspace.parent / f"home-{workspace.name}", server.url)
    )
    await session.__aenter__()
    loaded = await session.execute("%load_ext goat_jupyter")
    assert loaded.status == "ok", loaded.messages
    return session


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(server: ReplayServer, workspace: Path) -> AsyncIterator[KernelSession]:
    session = await start_kernel(workspace, server)
    yield session
    await session.__aexit__()


def frontend_for(
    kernel: KernelSession, workspace: Path, sources: list[str], **kw: Any
) -> FakeNotebookFrontend:
    """A notebook open in the fake JupyterLab (cell 0 is the running %%goat cell's neighbour)."""
    cells = [new_cell("code", s) for s in sources]
    return FakeNotebookFrontend(NB, cells, server_root=str(workspace), **kw).attach(kernel)


async def run_goat(kernel: KernelSession, prompt: str, cell_id: str | None) -> CellResult:
    metadata = {"cellId": cell_id} if cell_id else {}
    result = await kernel.execute(f"%%goat --new\n{prompt}", timeout=120, metadata=metadata)
    assert result.status == "ok", result.error
    return result


def tool_results(server: ReplayServer, tag: str) -> list[str]:
    requests = [r for r in server.requests if tag in json.dumps(r["messages"])]
    return [str(m.get("content")) for m in requests[-1]["messages"] if m["role"] == "tool"]


def shown(result: CellResult) -> str:
    return result.text("text/plain") + result.text("text/markdown")


async def test_notebook_edit_inserts_below_the_running_cell_and_replaces_live(
    kernel: KernelSession, workspace: Path, server: ReplayServer
) -> None:
    write_notebook(workspace / NB, ["on disk"])
    frontend = frontend_for(kernel, workspace, ["x = 1", "%%goat\n[insert] ...", "tail"])
    goat_cell = frontend.cells()[1]["id"]
    await run_goat(kernel, "[insert] add a cell below and set x", goat_cell)
    sources = [c["source"] for c in frontend.cells()]
    assert sources == ["x = 2", "%%goat\n[insert] ...", "print('below')", "tail"]
    stamp = frontend.cells()[2]["metadata"]["goat"]
    assert (
        set(stamp) == {"session", "model", "turn", "cell", "prompt", "source_hash"}
        and stamp["cell"] == goat_cell
        and stamp["prompt"] == "[insert] add a cell below and set x"
        and stamp["model"] == "openai/replay"
        and stamp["turn"] == 1
    )
    assert frontend.cells()[0]["metadata"]["goat"]["turn"] == 3
    assert nbformat.read(workspace / NB, as_version=4).cells[0].source == "on disk"  # pyright: ignore[reportUnknownMemberType]
    opened = frontend.opened[-1]
    assert opened["parent_header"]["session"] == kernel.client.session.session  # the client that ran the cell
    results = tool_results(server, "[insert]")
    assert (
        "Inserted a new code cell" in results[0]
        and f"(id {goat_cell}) of" in results[0]
        and "Read back, cell 3" in results[0]
    )


async def test_read_of_the_open_notebook_is_its_live_state(
    kernel: KernelSession, workspace: Path, server: ReplayServer
) -> None:
    write_notebook(workspace / NB, ["saved = 'on disk'"])
    frontend = frontend_for(kernel, workspace, ["saved = 'on disk'", "%%goat"])
    frontend.user_edit(frontend.cells()[0]["id"], "unsaved = 'typed in JupyterLab'")
    await run_goat(kernel, "[read] what is in the notebook?", frontend.cells()[1]["id"])
    [read] = tool_results(server, "[read]")
    assert "unsaved = 'typed in JupyterLab'" in read and "saved = 'on disk'" not in read
    assert "live state (with unsaved changes)" in read


async def test_write_of_the_open_notebook_is_refused(
    kernel: KernelSession, workspace: Path, server: ReplayServer
) -> None:
    write_notebook(workspace / NB, ["keep = 1"])
    frontend = frontend_for(kernel, workspace, ["keep = 1", "%%goat"])
    await run_goat(kernel, "[write] overwrite the notebook", frontend.cells()[1]["id"])
    [write] = tool_results(server, "[write]")
    assert write.startswith("Error:") and "NotebookEdit" in write and "open in JupyterLab" in write
    assert nbformat.read(workspace / NB, as_version=4).cells[0].source == "keep = 1"  # pyright: ignore[reportUnknownMemberType]


async def test_a_cell_the_user_changed_after_the_read_is_a_conflict(
    kernel: KernelSession, workspace: Path, server: ReplayServer
) -> None:
    frontend = frontend_for(kernel, workspace, ["x = 'original'", "%%goat"])
    goat_cell = frontend.cells()[1]["id"]
    first = await run_goat(kernel, "[conflict-1] read the notebook", goat_cell)
    assert "Read it." in shown(first)
    frontend.user_edit(frontend.cells()[0]["id"], "x = 'the user typed this'")
    # The same conversation (no --new): the agent's last read is from the previous cell.
    second = await kernel.execute(
        "%%goat\n[conflict-2] change x", timeout=120, metadata={"cellId": goat_cell}
    )
    assert second.status == "ok"
    [*_, conflict] = tool_results(server, "[conflict-2]")
    assert conflict.startswith("Error:") and "changed in JupyterLab" in conflict
    assert frontend.cells()[0]["source"] == "x = 'the user typed this'"


async def test_missing_labextension_falls_back_to_the_file_and_says_so_once(
    server: ReplayServer, tmp_path: Path
) -> None:
    """JupyterLab without the extension closes the comm (a silent frontend is tested in-process)."""
    mode = "close"
    prepare_workspace(tmp_path)
    ids = write_notebook(tmp_path / NB, ["a = 1"])
    session = await start_kernel(tmp_path, server)
    try:
        frontend = FakeNotebookFrontend(NB, [], server_root=str(tmp_path), mode=mode).attach(session)
        first = await run_goat(session, f"[fallback-{mode}] add two cells", "some-cell")
        on_disk = nbformat.read(tmp_path / NB, as_version=4)  # pyright: ignore[reportUnknownMemberType]
        assert [c.source for c in on_disk.cells] == ["# and again", "# added on disk", "a = 1"]
        assert on_disk.cells[2].id == ids[0]
        text = first.text("text/plain")
        assert text.count("live notebook bridge is not available") == 1 and "on disk" in text
        assert frontend.opened, "the kernel did try the bridge"
        second = await session.execute(
            f"%%goat\n[again-{mode}] one more", timeout=120, metadata={"cellId": "x"}
        )
        assert "bridge is not available" not in second.text("text/plain")
        assert len(nbformat.read(tmp_path / NB, as_version=4).cells) == 4  # pyright: ignore[reportUnknownMemberType]
    finally:
        await session.__aexit__()


async def test_headless_nbclient_run_edits_the_file_with_one_space_indent(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    turns = [
        tool_turn("Read", {"file_path": NB}, match="[headless]"),
        edit("[headless]", new_source="# Added by goat", cell_type="markdown", edit_mode="insert"),
        text_turn("Added.", match="[headless]"),
    ]
    v4: Any = nbformat.v4  # pyright: ignore[reportUnknownMemberType]
    nb = v4.new_notebook(
        cells=[v4.new_code_cell("%load_ext goat_jupyter"), v4.new_code_cell("%%goat\n[headless] add a title")]
    )
    path = tmp_path / NB
    nbformat.write(nb, path)  # pyright: ignore[reportUnknownMemberType]
    original_ids = [str(c.id) for c in nb.cells]
    with ReplayServer(turns) as replay:
        env = {**os.environ, **replay_kernel_env(tmp_path / "home", replay.url), "PYTHONPATH": str(REPO_ROOT)}
        client = NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        await client.async_execute(env=env)  # pyright: ignore[reportUnknownMemberType]
    text = path.read_text()
    assert text.startswith('{\n "cells": [\n  {\n')  # nbformat's 1-space indent
    saved = nbformat.read(path, as_version=4)  # pyright: ignore[reportUnknownMemberType]
    assert saved.cells[0].source == "# Added by goat"
    new_id = str(saved.cells[0].id)
    assert new_id and new_id not in original_ids and [str(c.id) for c in saved.cells[1:]] == original_ids
    assert saved.cells[0].metadata["goat"]["model"] == "openai/replay"
    assert "not run from JupyterLab" in json.dumps(client.nb.cells[1].outputs)
