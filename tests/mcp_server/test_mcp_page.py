"""With a JupyterLab page connected (the labextension's websocket, played by the in-memory stand-in):
reads see the live notebook with its unsaved edits, edits land in the page and are read back, runs show
in the page and stream from the real kernel, and what asks is put to the person in the page, naming the
client; a Deny or no answer reaches the client as an error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_server.mcp_helpers import call, mcp_client, notebook, start_kernel, user_settings
from tests.mcp_server.page import connected_page
from tests.notebook_frontend import FakeNotebookFrontend, new_cell
from tests.server_harness import JupyterServer, jupyter_server

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
SETTINGS = {"permission_mode": "acceptEdits", "permissions": {"allow": ["RunCell"]}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    tmp = tmp_path_factory.mktemp("page")
    with jupyter_server(tmp, extra_args=("--GoatMcp.approval_timeout=3",)) as server:
        user_settings(server, **SETTINGS)
        (server.root / NB).write_text(json.dumps(notebook()))
        start_kernel(server, NB)
        yield server


def frontend(server: JupyterServer) -> FakeNotebookFrontend:
    cells = [
        new_cell("code", "a = 1", id="c1"),
        new_cell("code", "secret = 2", {"tags": ["goat:locked"]}, id="c2"),
    ]
    return FakeNotebookFrontend(NB, cells, server_root=str(server.root))


async def test_read_sees_unsaved_edits_and_edits_land_in_the_page(server: JupyterServer) -> None:
    page_notebook = frontend(server)
    page_notebook.user_edit("c1", "a = 100  # typed, not saved")
    async with connected_page(server, page_notebook), mcp_client(server, name="claude-code") as session:
        failed, text = await call(session, "read_notebook", {"notebook_path": NB})
        assert not failed and "live state (with unsaved changes)" in text
        assert "a = 100  # typed, not saved" in text
        insert = {"notebook_path": NB, "cell_id": "c1", "edit_mode": "insert", "cell_type": "code",
                  "new_source": "b = a + 1\nprint('b is', b)"}  # fmt: skip
        failed, text = await call(session, "edit_cell", insert)
        assert not failed and "Read back" in text and "on disk" not in text
        new = page_notebook.cells()[1]
        assert new["source"] == "b = a + 1\nprint('b is', b)"
        assert new["metadata"]["goat"]["prompt"] == "outside agent claude-code"
        assert "b = a + 1" not in (server.root / NB).read_text()  # the page holds it until saved
        failed, text = await call(session, "run_cell", {"notebook_path": NB, "cell_id": "c1"})
        assert not failed, text
        failed, text = await call(session, "run_cell", {"notebook_path": NB, "cell_id": new["id"]})
        assert not failed and "b is 101" in text
        ran = [r for r in page_notebook.requests if r["op"] in ("run_started", "run_finished")]
        assert [r["op"] for r in ran] == ["run_started", "run_finished"] * 2
        assert ran[2]["run_id"] == ran[3]["run_id"]  # the page routes the kernel's messages by this id
        assert new["outputs"][0]["text"] == "b is 101\n" and new["execution_count"] == 2


async def test_a_locked_cell_asks_in_the_page_and_deny_is_an_error(server: JupyterServer) -> None:
    page_notebook = frontend(server)
    async with connected_page(server, page_notebook) as page, mcp_client(server, name="codex") as session:
        await call(session, "read_notebook", {"notebook_path": NB})
        edit = {"notebook_path": NB, "cell_id": "c2", "new_source": "secret = 3"}
        failed, text = await call(session, "edit_cell", edit)
        assert failed and "denied" in text and "Do not retry it unchanged" in text
        [asked] = page.approvals
        assert asked["client"] == "codex" and asked["tool"] == "NotebookEdit"
        assert asked["cell_id"] == "c2" and asked["preview"] == "secret = 3"
        assert page_notebook.cell("c2")["source"] == "secret = 2"
        page.choice = "allow_once"
        failed, text = await call(session, "edit_cell", edit)
        assert not failed and page_notebook.cell("c2")["source"] == "secret = 3"


async def test_unanswered_in_time_is_denied_with_a_sentence(server: JupyterServer) -> None:
    page_notebook = frontend(server)
    async with connected_page(server, page_notebook) as page, mcp_client(server) as session:
        page.choice = "silent"
        await call(session, "read_notebook", {"notebook_path": NB})
        failed, text = await call(
            session, "edit_cell", {"notebook_path": NB, "cell_id": "c2", "new_source": "x"}
        )
        assert failed and "did not answer test-agent's request in JupyterLab within 3 s" in text
        assert page_notebook.cell("c2")["source"] == "secret = 2"


async def test_allow_for_session_covers_the_next_call_of_that_client_only(server: JupyterServer) -> None:
    page_notebook = frontend(server)
    async with connected_page(server, page_notebook) as page:
        page.choice = "allow_session"
        async with mcp_client(server, name="vscode") as session:
            await call(session, "read_notebook", {"notebook_path": NB})
            failed, _ = await call(session, "inspect_variable", {"notebook_path": NB, "expression": "1 + 1"})
            assert not failed and len(page.approvals) == 1
            failed, text = await call(
                session, "inspect_variable", {"notebook_path": NB, "expression": "1 + 1"}
            )
            assert (failed, text, len(page.approvals)) == (False, "1 + 1 =\nint\n2", 1)
        page.choice = "deny"
        async with mcp_client(server, name="other-agent") as session:
            failed, _ = await call(session, "inspect_variable", {"notebook_path": NB, "expression": "1 + 1"})
            assert failed and len(page.approvals) == 2


async def test_a_page_that_goes_away_leaves_the_files(server: JupyterServer) -> None:
    async with connected_page(server, frontend(server)):
        pass
    async with mcp_client(server) as session:
        failed, text = await call(session, "list_notebooks", {})
        assert not failed and "not connected" in text


async def test_nothing_was_saved_by_the_page_edits(server: JupyterServer) -> None:
    assert json.loads(Path(server.root / NB).read_text())["cells"] == []
