"""With no JupyterLab page connected: the tools work on the .ipynb file and the notebook's kernel
through the server and say so; every call passes goat's permission engine (asks are denied with a
sentence, since nobody can answer); paths stay inside the server's root."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_server.mcp_helpers import call, code, mcp_client, notebook, start_kernel, user_settings
from tests.server_harness import JupyterServer, jupyter_server

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

ALLOW = {"permissions": {"allow": ["NotebookEdit", "RunCell", "KernelInspect"]}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    tmp = tmp_path_factory.mktemp("files")
    with jupyter_server(tmp) as server:
        user_settings(server, **ALLOW)
        cells = [code("c1", "x = 41\nprint(x)"), code("c2", "y = 2", tags=("goat:locked",)),
                 code("c3", "z = 3", tags=("goat:no-run",))]  # fmt: skip
        (server.root / "nb.ipynb").write_text(json.dumps(notebook(*cells)))
        start_kernel(server, "nb.ipynb")
        yield server


def saved(server: JupyterServer) -> dict[str, dict[str, Any]]:
    cells = json.loads((server.root / "nb.ipynb").read_text())["cells"]
    return {cell["id"]: cell for cell in cells}


def source(server: JupyterServer, cell_id: str) -> str:
    value = saved(server)[cell_id]["source"]
    return "".join(value) if isinstance(value, list) else str(value)


async def test_read_insert_run_inspect_on_the_file_and_kernel(server: JupyterServer) -> None:
    async with mcp_client(server) as session:
        failed, listing = await call(session, "list_notebooks", {})
        assert not failed and "- nb.ipynb (kernel python3" in listing and "not connected" in listing
        failed, text = await call(session, "read_notebook", {"notebook_path": "nb.ipynb"})
        assert not failed and 'id="c1"' in text and 'tags="goat:locked"' in text
        args = {"notebook_path": "nb.ipynb", "cell_id": "c1", "edit_mode": "insert", "cell_type": "code",
                "new_source": "x += 1\nprint('x is', x)"}  # fmt: skip
        failed, text = await call(session, "edit_cell", args)
        assert not failed and "Read back" in text and "on disk, not the live notebook" in text
        new_id = next(i for i in saved(server) if i not in ("c1", "c2", "c3"))
        stamp = saved(server)[new_id]["metadata"]["goat"]
        assert stamp["prompt"] == "outside agent test-agent"  # the provenance badge names the client
        for cell_id, expected in (("c1", "41"), (new_id, "x is 42")):
            failed, text = await call(session, "run_cell", {"notebook_path": "nb.ipynb", "cell_id": cell_id})
            assert not failed and expected in text and "the file was updated" in text
        assert saved(server)[new_id]["outputs"][0]["text"] == ["x is 42\n"]
        failed, text = await call(
            session, "inspect_variable", {"notebook_path": "nb.ipynb", "expression": "x * 2"}
        )
        assert (failed, text) == (False, "x * 2 =\nint\n84")  # as KernelInspect says it
        frame = "__import__('pandas').DataFrame({'a': [1, 2, 3]})  # a comment cannot cut the call"
        failed, text = await call(
            session, "inspect_variable", {"notebook_path": "nb.ipynb", "expression": frame}
        )
        assert not failed and "pandas.DataFrame with shape (3, 1)" in text, text  # goat's summary, not a repr
        failed, text = await call(
            session, "inspect_variable", {"notebook_path": "nb.ipynb", "expression": "nope"}
        )
        assert failed and "NameError" in text and "goat_jupyter" not in text


async def test_stop_interrupts_a_blocking_cell(server: JupyterServer) -> None:
    async with mcp_client(server) as session:
        await call(session, "read_notebook", {"notebook_path": "nb.ipynb"})
        args = {"notebook_path": "nb.ipynb", "cell_id": "c1", "edit_mode": "insert", "cell_type": "code",
                "new_source": "import time\ntime.sleep(60)"}  # fmt: skip
        failed, text = await call(session, "edit_cell", args)
        assert not failed, text
        new_id = text.split("with id ")[1].split()[0]
        running = asyncio.ensure_future(
            call(session, "run_cell", {"notebook_path": "nb.ipynb", "cell_id": new_id})
        )
        await asyncio.sleep(3)
        started = time.monotonic()
        failed, text = await call(session, "stop", {"notebook_path": "nb.ipynb"})
        assert not failed and text.startswith("Interrupted kernel")
        failed, text = await asyncio.wait_for(running, 20)
        assert time.monotonic() - started < 10
        assert "KeyboardInterrupt" in text


async def test_locks_and_rules_apply_as_in_the_kernel(server: JupyterServer) -> None:
    async with mcp_client(server, name="codex") as session:
        await call(session, "read_notebook", {"notebook_path": "nb.ipynb"})
        failed, text = await call(
            session, "edit_cell", {"notebook_path": "nb.ipynb", "cell_id": "c2", "new_source": "y = 3"}
        )
        assert failed and "Nobody can approve codex's call" in text  # locked: asks, and nobody can answer
        failed, text = await call(session, "run_cell", {"notebook_path": "nb.ipynb", "cell_id": "c3"})
        assert failed and "goat:no-run" in text  # refused in every mode
        locked_at = f"cell-{list(saved(server)).index('c2')}"  # the locked cell by index: the same lock
        failed, text = await call(session, "run_cell", {"notebook_path": "nb.ipynb", "cell_id": locked_at})
        assert failed and "Nobody can approve" in text
    assert source(server, "c2") == "y = 2"


async def test_deny_rules_and_the_managed_tool_list_bind_outside_agents(server: JupyterServer) -> None:
    user_settings(server, permissions={"allow": ["NotebookEdit", "KernelInspect"], "deny": ["RunCell"]})
    try:
        async with mcp_client(server) as session:
            failed, text = await call(session, "run_cell", {"notebook_path": "nb.ipynb", "cell_id": "c1"})
            assert failed and "RunCell" in text and "deny" in text.lower()
    finally:
        user_settings(server, **ALLOW)


async def test_without_an_allow_rule_edits_ask_and_are_denied_headless(server: JupyterServer) -> None:
    user_settings(server)
    try:
        async with mcp_client(server) as session:
            await call(session, "read_notebook", {"notebook_path": "nb.ipynb"})
            failed, text = await call(
                session, "edit_cell", {"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x = 0"}
            )
            assert failed and "allow this tool in goat's permission rules" in text
            failed, text = await call(
                session,
                "inspect_variable",
                {"notebook_path": "nb.ipynb", "expression": "open('/etc/passwd').read()"},
            )
            assert failed and "Nobody can approve" in text
    finally:
        user_settings(server, **ALLOW)
    assert source(server, "c1") == "x = 41\nprint(x)"


OUTSIDE = ["../nb.ipynb", "/etc/passwd.ipynb", "sub/../../nb.ipynb", "%2e%2e/nb.ipynb", "~/x.ipynb",
           "link/inside.ipynb", "escape.ipynb", "folder.ipynb", "nb.ipynb\x00.txt", "", "nb.json"]  # fmt: skip


async def test_paths_outside_the_root_are_refused_by_every_tool(server: JupyterServer) -> None:
    outside = server.root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "inside.ipynb").write_text(json.dumps(notebook(code("o1", "secret = 1"))))
    (server.root / "link").unlink(missing_ok=True)
    os.symlink(outside, server.root / "link")
    (server.root / "escape.ipynb").unlink(missing_ok=True)
    os.symlink(outside / "inside.ipynb", server.root / "escape.ipynb")
    (server.root / "folder.ipynb").mkdir(exist_ok=True)
    before = (outside / "inside.ipynb").read_text()
    async with mcp_client(server) as session:
        for raw in OUTSIDE:
            for tool, extra in (("read_notebook", {}), ("edit_cell", {"new_source": "x", "cell_id": "cell-0"}),
                                ("run_cell", {"cell_id": "cell-0"}), ("stop", {}),
                                ("inspect_variable", {"expression": "1"})):  # fmt: skip
                failed, text = await call(session, tool, {"notebook_path": raw, **extra})
                assert failed, (tool, raw, text)
                assert "secret" not in text
    assert (outside / "inside.ipynb").read_text() == before


async def test_an_absolute_path_inside_the_root_is_accepted(server: JupyterServer) -> None:
    async with mcp_client(server) as session:
        failed, text = await call(session, "read_notebook", {"notebook_path": str(server.root / "nb.ipynb")})
        assert not failed and 'id="c1"' in text


async def test_no_tool_changes_settings_trust_or_policy(server: JupyterServer) -> None:
    """The client gets six tools; none writes anything but a notebook under the root, and a notebook
    path that names goat's own files is not a notebook."""
    async with mcp_client(server) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == {
            "list_notebooks",
            "read_notebook",
            "edit_cell",
            "run_cell",
            "stop",
            "inspect_variable",
        }
        before = (server.home / ".goat" / "settings.json").read_text()
        for raw in (".goat/settings.json", str(server.home / ".goat" / "settings.json"), ".goat/trust.json"):
            failed, _ = await call(
                session, "edit_cell", {"notebook_path": raw, "new_source": "{}", "cell_id": "cell-0"}
            )
            assert failed
        assert (server.home / ".goat" / "settings.json").read_text() == before
        assert not (server.root / ".goat" / "trust.json").exists()


async def test_the_notebook_on_disk_is_valid_after_all_this(server: JupyterServer) -> None:
    import nbformat

    nbformat.validate(nbformat.reads((server.root / "nb.ipynb").read_text(), as_version=4))  # pyright: ignore[reportUnknownMemberType]
    assert isinstance(Path(server.root / "nb.ipynb").stat().st_size, int)
