"""Delete: real files, folders and symlinks; guards for protected paths; read records dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "full" / "sub").mkdir(parents=True)
    (root / "full" / "a.txt").write_text("a")
    (root / "full" / "sub" / "b.txt").write_text("b")
    (root / "empty").mkdir()
    (root / "note.txt").write_text("note")
    return root


@pytest.fixture
def registry(workspace: Path) -> Registry:
    return default_registry(cwd=workspace)


async def test_delete_a_file_and_forget_its_read_record(registry: Registry, workspace: Path):
    note = workspace / "note.txt"
    registry.session.file_reads.record(note)
    out = await registry.call("Delete", {"path": "note.txt"})
    assert not out.is_error, out.content
    assert not note.exists()
    assert str(note) in out.content and out.metadata["deleted"] == [str(note)]
    assert not registry.session.file_reads.was_read(note)


async def test_empty_directory_needs_no_recursive(registry: Registry, workspace: Path):
    out = await registry.call("Delete", {"path": "empty"})
    assert not out.is_error and not (workspace / "empty").exists()


async def test_non_empty_directory_needs_recursive(registry: Registry, workspace: Path):
    out = await registry.call("Delete", {"path": "full"})
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert "recursive" in out.content
    assert (workspace / "full" / "sub" / "b.txt").exists()


async def test_recursive_delete_forgets_every_file_below(registry: Registry, workspace: Path):
    inner = workspace / "full" / "sub" / "b.txt"
    registry.session.file_reads.record(inner)
    out = await registry.call("Delete", {"path": str(workspace / "full"), "recursive": True})
    assert not out.is_error, out.content
    assert not (workspace / "full").exists()
    assert "2 files" in out.content
    assert not registry.session.file_reads.was_read(inner)


async def test_missing_path_is_file_not_found(registry: Registry):
    out = await registry.call("Delete", {"path": "ghost.txt"})
    assert out.is_error and out.error_code == "FILE_NOT_FOUND"


@pytest.mark.parametrize("target", ["workspace", "parent", "root"])
async def test_refuses_root_workspace_and_its_parents(registry: Registry, workspace: Path, target: str):
    path = {"workspace": str(workspace), "parent": str(workspace.parent), "root": "/"}[target]
    out = await registry.call("Delete", {"path": path, "recursive": True})
    assert out.is_error and out.error_code == "INVALID_PATH"
    assert (workspace / "note.txt").exists()


async def test_refuses_the_workspace_given_as_dot(registry: Registry, workspace: Path):
    out = await registry.call("Delete", {"path": ".", "recursive": True})
    assert out.is_error and out.error_code == "INVALID_PATH"
    assert workspace.exists()


async def test_symlink_is_removed_not_its_target(registry: Registry, workspace: Path):
    link = workspace / "link"
    link.symlink_to(workspace / "full")
    out = await registry.call("Delete", {"path": "link", "recursive": True})
    assert not out.is_error, out.content
    assert not link.exists() and not link.is_symlink()
    assert (workspace / "full" / "a.txt").exists()
    assert "symlink" in out.content


async def test_broken_symlink_can_be_deleted(registry: Registry, workspace: Path):
    link = workspace / "dangling"
    link.symlink_to(workspace / "nowhere")
    out = await registry.call("Delete", {"path": "dangling"})
    assert not out.is_error and not link.is_symlink()


async def test_is_a_mutating_tool(registry: Registry):
    tool = registry.get("Delete")
    assert tool is not None and tool.side_effect == "mutating"
