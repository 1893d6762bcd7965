"""Write: create, overwrite after Read, conflicts, format preservation and the open-notebook guard."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from goat_jupyter.live.comm_bridge import CommBridge
from goat_jupyter.live.select import NotebookService
from goat_jupyter.tools import Registry, ToolCall, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor
from tests.notebook_frontend import FakeNotebookFrontend, loopback_opener


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def write(registry: Registry, path: Path | str, content: str):
    return await registry.call("Write", {"file_path": str(path), "content": content})


async def read(registry: Registry, path: Path | str):
    return await registry.call("Read", {"file_path": str(path)})


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_creates_file_and_parent_folders(registry: Registry, tmp_path: Path) -> None:
    out = await write(registry, "deep/er/new.py", "a = 1\nb = 2\n")
    target = tmp_path / "deep" / "er" / "new.py"
    assert not out.is_error
    assert target.read_text() == "a = 1\nb = 2\n"
    assert "Created" in out.content and str(target) in out.content and "2 lines" in out.content
    assert out.metadata["path"] == str(target) and out.metadata["created"] is True


async def test_new_file_mode_follows_the_umask(registry: Registry, tmp_path: Path) -> None:
    await write(registry, tmp_path / "fresh.txt", "x")
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o666 & ~current_umask()


async def test_overwriting_an_unread_file_is_a_conflict(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original\n")
    out = await write(registry, target, "replaced\n")
    assert out.metadata["error_code"] == "CONFLICT"
    assert "Read" in out.content
    assert target.read_text() == "original\n"


async def test_overwrite_after_read_says_updated(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original\n")
    await read(registry, target)
    out = await write(registry, target, "one\ntwo\nthree")
    assert not out.is_error
    assert "Updated" in out.content and "3 lines" in out.content
    assert target.read_text() == "one\ntwo\nthree"


async def test_file_changed_on_disk_after_read_is_a_conflict(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("v1\n")
    await read(registry, target)
    target.write_text("v2 from the user\n")
    stamp = target.stat().st_mtime_ns + 5_000_000_000
    os.utime(target, ns=(stamp, stamp))
    out = await write(registry, target, "v3\n")
    assert out.metadata["error_code"] == "CONFLICT"
    assert target.read_text() == "v2 from the user\n"


async def test_own_write_needs_no_reread(registry: Registry, tmp_path: Path) -> None:
    await write(registry, tmp_path / "a.txt", "first\n")
    out = await write(registry, tmp_path / "a.txt", "second\n")
    assert not out.is_error
    assert (tmp_path / "a.txt").read_text() == "second\n"


async def test_keeps_mode_crlf_and_bom(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "run.cmd"
    target.write_bytes(b"\xef\xbb\xbf@echo off\r\necho hi\r\n")
    target.chmod(0o751)
    await read(registry, target)
    out = await write(registry, target, "@echo off\necho bye\n")
    assert not out.is_error
    assert target.read_bytes() == b"\xef\xbb\xbf@echo off\r\necho bye\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


async def test_keeps_utf16(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "wide.txt"
    target.write_bytes("old\n".encode("utf-16"))
    await read(registry, target)
    await write(registry, target, "nouveau é\n")
    assert target.read_bytes() == "nouveau é\n".encode("utf-16")


async def test_is_atomic_and_leaves_no_temp_files(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    inode = target.stat().st_ino
    await read(registry, target)
    await write(registry, target, "new\n")
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place


async def test_writes_through_a_symlink(registry: Registry, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    await read(registry, link)
    out = await write(registry, link, "new\n")
    assert not out.is_error
    assert link.is_symlink() and real.read_text() == "new\n"


async def test_tilde_is_expanded(registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    out = await write(registry, "~/docs/n.txt", "x\n")
    target = tmp_path / "home" / "docs" / "n.txt"
    assert target.read_text() == "x\n" and str(target) in out.content


async def test_directory_target_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    out = await write(registry, tmp_path / "folder", "x")
    assert out.is_error and out.metadata["error_code"] == "INVALID_PATH"


async def test_parent_that_is_a_file_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    out = await write(registry, tmp_path / "plain" / "child.txt", "x")
    assert out.is_error and out.metadata["error_code"] == "INVALID_PATH"


def live_notebooks(tmp_path: Path, *open_paths: str) -> tuple[NotebookService, FakeNotebookFrontend]:
    """The real notebook service over a loopback comm to a frontend with `open_paths` open."""
    frontend = FakeNotebookFrontend("own.ipynb", [], server_root=str(tmp_path))
    for path in open_paths:
        frontend.notebooks[path] = []
    service = NotebookService(
        lambda: CommBridge(loopback_opener(frontend)),
        notify=print,
        kernel_dir=(Path(frontend.server_root) / frontend.own_path).parent,
    )
    service.begin_run(running_cell_id=None, probe=True)
    return service, frontend


async def write_with_bridge(registry: Registry, bridge: NotebookService, path: Path, content: str):
    executor = Executor(registry, registry.session, services=Services(bridge=bridge))
    return await executor.run_one(ToolCall("w1", "Write", {"file_path": str(path), "content": content}))


async def test_notebook_open_in_frontend_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "live.ipynb"
    target.write_text("{}")
    await read(registry, target)
    service, frontend = live_notebooks(tmp_path, "live.ipynb")
    out = await write_with_bridge(registry, service, target, '{"cells": []}')
    assert out.is_error and "NotebookEdit" in out.content
    assert target.read_text() == "{}"
    assert [r["path"] for r in frontend.requests if r["op"] == "is_open"] == ["live.ipynb"]


async def test_notebook_not_open_or_without_bridge_is_written(registry: Registry, tmp_path: Path) -> None:
    closed = tmp_path / "closed.ipynb"
    service, _ = live_notebooks(tmp_path, "other-open.ipynb")
    out = await write_with_bridge(registry, service, closed, "{}")
    assert not out.is_error and closed.read_text() == "{}"
    plain = await write(registry, tmp_path / "other.ipynb", "{}")
    assert not plain.is_error
