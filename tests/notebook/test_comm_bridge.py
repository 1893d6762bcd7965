"""CommBridge, LiveNotebook and the backend choice, in-process against the fake labextension."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from goat_jupyter.agent.session import Session
from goat_jupyter.errors import InvalidInputError, ToolTimeoutError
from goat_jupyter.live import FileNotebook
from goat_jupyter.live.comm_bridge import BridgeUnavailableError, CommBridge
from goat_jupyter.live.live_notebook import LiveNotebook
from goat_jupyter.live.select import NotebookService
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.notebook.notebook_provenance import source_hash
from goat_jupyter.tools.runner import Executor, ToolCall
from tests.notebook_frontend import FakeNotebookFrontend, LoopbackComm, loopback_opener, new_cell

Message = dict[str, Any]


class ManualComm:
    """A comm whose replies the test delivers by hand, in any order."""

    def __init__(self, on_msg: Any, on_close: Any) -> None:
        self.on_msg, self.on_close = on_msg, on_close
        self.sent: list[Message] = []

    def send(self, data: Message) -> None:
        self.sent.append(data)
        if data["op"] == "hello":
            self.reply(data["id"], path="nb.ipynb", server_root="/srv")

    def reply(self, request_id: str, **result: Any) -> None:
        self.on_msg({"content": {"data": {"id": request_id, "ok": True, **result}}})

    def close(self) -> None:
        pass


def frontend_with_cells(tmp_path: Path, mode: str = "answer") -> FakeNotebookFrontend:
    cells = [
        new_cell("code", "x = 1", execution_count=1),
        new_cell("markdown", "# Notes"),
        new_cell("code", "x"),
    ]
    return FakeNotebookFrontend("work/nb.ipynb", cells, server_root=str(tmp_path), mode=mode)  # type: ignore[arg-type]


def service_for(
    frontend: FakeNotebookFrontend, notices: list[str] | None = None, **bridge: Any
) -> NotebookService:
    def factory() -> CommBridge:
        return CommBridge(loopback_opener(frontend), **bridge)

    kernel_dir = (Path(frontend.server_root) / frontend.own_path).parent  # where JupyterLab starts it
    return NotebookService(
        factory, notify=(notices if notices is not None else []).append, kernel_dir=kernel_dir
    )


async def test_replies_resolve_their_own_request_even_out_of_order() -> None:
    comms: list[ManualComm] = []

    def opener(target: str, on_msg: Any, on_close: Any) -> ManualComm:
        comms.append(ManualComm(on_msg, on_close))
        return comms[-1]

    bridge = CommBridge(opener)
    first = asyncio.ensure_future(bridge.request("list_cells", path="a.ipynb"))
    second = asyncio.ensure_future(bridge.request("list_cells", path="b.ipynb"))
    while not comms or len(comms[0].sent) < 3:
        await asyncio.sleep(0.001)
    hello, request_a, request_b = comms[0].sent
    assert hello["op"] == "hello" and request_a["path"] == "a.ipynb" and request_a["id"] != request_b["id"]
    comms[0].reply(request_b["id"], cells=["b"])
    comms[0].reply(request_a["id"], cells=["a"])
    assert (await first)["cells"] == ["a"] and (await second)["cells"] == ["b"]
    assert bridge.hello is not None and bridge.hello.path == "nb.ipynb"


async def test_replies_delivered_on_another_thread_resolve(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    bridge = CommBridge(loopback_opener(frontend, from_thread=True))
    notebook = LiveNotebook(bridge, tmp_path / "work/nb.ipynb", None)
    cells = await notebook.list_cells()
    assert [c.source for c in cells] == ["x = 1", "# Notes", "x"]
    assert bridge.state == "live"


async def test_live_notebook_operations_change_the_frontend_model(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    notebook = LiveNotebook(CommBridge(loopback_opener(frontend)), tmp_path / "work/nb.ipynb", None)
    first, markdown, last = await notebook.list_cells()
    frontend.cell(first.id)["metadata"] = {"tags": ["keep"]}
    frontend.cell(first.id)["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "old"}]
    await notebook.list_cells()
    await notebook.replace_cell(first.id, "x = 2", metadata={"goat": {"turn": 1}})
    assert frontend.cell(first.id)["source"] == "x = 2"
    assert frontend.cell(first.id)["metadata"] == {"tags": ["keep"], "goat": {"turn": 1}}
    assert frontend.cell(first.id)["outputs"] == [] and frontend.cell(first.id)["execution_count"] is None
    new_id = await notebook.insert_cell(markdown.id, "code", "y = 3", metadata={"goat": {}})
    top_id = await notebook.insert_cell(None, "markdown", "# Top")
    await notebook.replace_cell(markdown.id, "z = 1", cell_type="code")
    await notebook.delete_cell(last.id)
    outputs = [
        {"output_type": "execute_result", "execution_count": 7, "data": {"text/plain": "3"}, "metadata": {}}
    ]
    await notebook.set_outputs(new_id, outputs, 7)
    assert [(c["id"], c["cell_type"], c["source"]) for c in frontend.cells()] == [
        (top_id, "markdown", "# Top"),
        (first.id, "code", "x = 2"),
        (markdown.id, "code", "z = 1"),
        (new_id, "code", "y = 3"),
    ]
    assert frontend.cell(new_id)["outputs"] == outputs and frontend.cell(new_id)["execution_count"] == 7
    assert frontend.dirty["work/nb.ipynb"] and not frontend.saved
    await notebook.save()  # live edits stay unsaved until the user saves
    assert not frontend.saved


async def test_frontend_refusals_become_errors_naming_the_operation(tmp_path: Path) -> None:
    notebook = LiveNotebook(CommBridge(loopback_opener(frontend_with_cells(tmp_path))), tmp_path / "nb", None)
    with pytest.raises(InvalidInputError, match="refused 'delete_cell': no cell with id 'nope'"):
        await notebook.delete_cell("nope")


async def test_a_closed_comm_means_no_frontend() -> None:
    frontend = FakeNotebookFrontend("nb.ipynb", [], server_root="/", mode="close")
    bridge = CommBridge(loopback_opener(frontend), hello_timeout=5)
    assert await bridge.connect() is None
    assert bridge.state == "absent" and "labextension" in bridge.absent_reason
    with pytest.raises(BridgeUnavailableError, match="not available"):
        await bridge.request("list_cells")


async def test_silence_times_out_as_no_frontend() -> None:
    frontend = FakeNotebookFrontend("nb.ipynb", [], server_root="/", mode="silent")
    bridge = CommBridge(loopback_opener(frontend), hello_timeout=0.05)
    assert await bridge.connect() is None
    assert "no frontend answered within 0.05 s" in bridge.absent_reason


async def test_an_unanswered_request_times_out_and_the_next_one_says_hello_again() -> None:
    comms: list[ManualComm] = []

    def opener(target: str, on_msg: Any, on_close: Any) -> ManualComm:
        comms.append(ManualComm(on_msg, on_close))
        return comms[-1]

    bridge = CommBridge(opener, request_timeout=0.05)
    with pytest.raises(ToolTimeoutError, match=r"did not answer 'list_cells' within 0\.05 s"):
        await bridge.request("list_cells")
    assert bridge.state == "unknown"
    await bridge.connect()
    assert len(comms) == 2 and bridge.state == "live"


async def test_no_kernel_comm_means_no_frontend() -> None:
    def opener(target: str, on_msg: Any, on_close: Any) -> LoopbackComm:
        raise RuntimeError("no kernel")

    bridge = CommBridge(opener)
    assert await bridge.connect() is None and "no kernel" in bridge.absent_reason


async def test_backend_choice_by_path(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    frontend.notebooks["other/open.ipynb"] = [new_cell("code", "a")]
    service = service_for(frontend)
    own = await service.backend_for(tmp_path / "work" / "nb.ipynb")
    other = await service.backend_for(tmp_path / "other" / "open.ipynb")
    closed = await service.backend_for(tmp_path / "closed.ipynb")
    outside = await service.backend_for(Path("/elsewhere/nb.ipynb"))
    assert isinstance(own, LiveNotebook) and own.frontend_path is None
    assert isinstance(other, LiveNotebook) and other.frontend_path == "other/open.ipynb"
    assert [c.source for c in await other.list_cells()] == ["a"]
    assert isinstance(closed, FileNotebook) and isinstance(outside, FileNotebook)
    assert await service.is_open(str(tmp_path / "work/nb.ipynb"))
    assert not await service.is_open(str(tmp_path / "closed.ipynb"))
    assert await service.owner_path() == tmp_path / "work" / "nb.ipynb"


@pytest.mark.parametrize("mode", ["close", "silent"])
async def test_without_a_frontend_the_file_is_used_and_the_user_told_once(tmp_path: Path, mode: str) -> None:
    notices: list[str] = []
    service = service_for(frontend_with_cells(tmp_path, mode), notices, hello_timeout=0.05)
    for _ in range(2):
        assert isinstance(await service.backend_for(tmp_path / "work/nb.ipynb"), FileNotebook)
        service.begin_run(running_cell_id=None, probe=True)  # a new run probes again, but stays quiet
    assert len(notices) == 1 and "on disk" in notices[0] and "Reload Notebook from Disk" in notices[0]


async def test_cells_not_run_from_jupyterlab_use_the_file_without_probing(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    notices: list[str] = []
    service = service_for(frontend, notices)
    service.begin_run(running_cell_id=None, probe=False)
    assert isinstance(await service.backend_for(tmp_path / "work/nb.ipynb"), FileNotebook)
    assert not frontend.requests and "not run from JupyterLab" in notices[0]


# The tools through the bridge (in-process; tests/kernel/test_kernel_notebook.py does it in a real kernel).


def make_executor(tmp_path: Path, frontend: FakeNotebookFrontend) -> tuple[Executor, NotebookService]:
    session = Session(workspace=tmp_path, persist=False)
    session.turns = 3
    service = service_for(frontend)
    executor = Executor(default_registry(session=session), session, services=Services(bridge=service))
    return executor, service


async def call(executor: Executor, name: str, **args: Any) -> Any:
    return (await executor.run_calls([ToolCall(f"call-{name}", name, args)]))[0]


async def test_insert_without_cell_id_goes_below_the_running_cell_in_order(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    executor, service = make_executor(tmp_path, frontend)
    running = frontend.cells()[1]["id"]
    service.begin_run(running_cell_id=running, probe=True)
    path = str(tmp_path / "work/nb.ipynb")
    for source in ("first", "second"):
        out = await call(
            executor,
            "NotebookEdit",
            notebook_path=path,
            new_source=source,
            cell_type="code",
            edit_mode="insert",
        )
        assert not out.is_error, out.content
        assert out.metadata["live"] is True
    sources = [c["source"] for c in frontend.cells()]
    assert sources == ["x = 1", "# Notes", "first", "second", "x"]
    stamp = frontend.cells()[2]["metadata"]["goat"]
    assert stamp == {
        "session": executor.session.session_id,
        "model": executor.session.settings.model,
        "turn": 3,
        "cell": running,  # the %%goat cell it came from (no prompt given to this run)
        "source_hash": source_hash("first"),
    }


async def test_read_shows_unsaved_state_and_a_user_edit_after_it_is_a_conflict(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    path = tmp_path / "work" / "nb.ipynb"
    path.parent.mkdir()
    nb = new_notebook(cells=[new_code_cell("saved on disk")])
    path.write_text(nbformat.writes(nb))  # pyright: ignore[reportUnknownMemberType]
    executor, _ = make_executor(tmp_path, frontend)
    first = frontend.cells()[0]["id"]
    frontend.user_edit(first, "x = 'typed, not saved'")
    read = await call(executor, "Read", file_path=str(path))
    assert "x = 'typed, not saved'" in read.content and "saved on disk" not in read.content
    assert "live state (with unsaved changes)" in read.content and read.metadata["live"]
    ok = await call(executor, "NotebookEdit", notebook_path=str(path), cell_id=first, new_source="x = 10")
    assert not ok.is_error and frontend.cell(first)["source"] == "x = 10"
    again = await call(executor, "NotebookEdit", notebook_path=str(path), cell_id=first, new_source="x = 11")
    assert not again.is_error, "the agent's own edit is not a conflict"
    frontend.user_edit(first, "x = 'the user again'")
    conflict = await call(
        executor, "NotebookEdit", notebook_path=str(path), cell_id=first, new_source="x = 12"
    )
    assert conflict.is_error and conflict.metadata["error_code"] == "CONFLICT"
    assert (
        "changed in JupyterLab" in conflict.content
        and frontend.cell(first)["source"] == "x = 'the user again'"
    )
    write = await call(executor, "Write", file_path=str(path), content="{}")
    assert write.is_error and "NotebookEdit" in write.content and "saved on disk" in path.read_text()


async def test_without_a_cell_id_the_frontend_is_asked_which_cell_runs(tmp_path: Path) -> None:
    frontend = frontend_with_cells(tmp_path)
    frontend.running_cell_id = frontend.cells()[0]["id"]
    executor, service = make_executor(tmp_path, frontend)
    service.begin_run(running_cell_id=None, probe=True)
    path = str(tmp_path / "work/nb.ipynb")
    out = await call(
        executor,
        "NotebookEdit",
        notebook_path=path,
        new_source="# below",
        cell_type="markdown",
        edit_mode="insert",
    )
    assert not out.is_error, out.content
    assert [c["source"] for c in frontend.cells()] == ["x = 1", "# below", "# Notes", "x"]
    assert [r["op"] for r in frontend.requests].count("running_cell") == 1
