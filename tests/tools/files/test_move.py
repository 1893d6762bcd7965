"""Move: renames and moves on a real filesystem; existing targets, overwrite, parents, guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "dir" / "sub").mkdir(parents=True)
    (root / "dir" / "sub" / "inner.txt").write_text("inner")
    (root / "a.txt").write_text("A")
    (root / "b.txt").write_text("B")
    (root / "emptydir").mkdir()
    return root


@pytest.fixture
def registry(workspace: Path) -> Registry:
    return default_registry(cwd=workspace)


async def move(registry: Registry, source: str, target: str, **extra: object):
    return await registry.call("Move", {"from": source, "to": target, **extra})


async def test_rename_a_file_and_forget_the_old_path(registry: Registry, workspace: Path):
    registry.session.file_reads.record(workspace / "a.txt")
    out = await move(registry, "a.txt", "renamed.txt")
    assert not out.is_error, out.content
    assert (workspace / "renamed.txt").read_text() == "A" and not (workspace / "a.txt").exists()
    assert not registry.session.file_reads.was_read(workspace / "a.txt")
    assert out.metadata == {
        "from": str(workspace / "a.txt"),
        "to": str(workspace / "renamed.txt"),
        "replaced": False,
    }


async def test_creates_the_destination_parents(registry: Registry, workspace: Path):
    out = await move(registry, "a.txt", "new/deep/a.txt")
    assert not out.is_error, out.content
    assert (workspace / "new" / "deep" / "a.txt").read_text() == "A"


async def test_existing_target_is_a_conflict_unless_overwrite(registry: Registry, workspace: Path):
    out = await move(registry, "a.txt", "b.txt")
    assert out.is_error and out.error_code == "CONFLICT" and "overwrite" in out.content
    assert (workspace / "b.txt").read_text() == "B" and (workspace / "a.txt").exists()
    registry.session.file_reads.record(workspace / "b.txt")
    out = await move(registry, "a.txt", "b.txt", overwrite=True)
    assert not out.is_error, out.content
    assert (workspace / "b.txt").read_text() == "A" and not (workspace / "a.txt").exists()
    assert out.metadata["replaced"] is True
    assert not registry.session.file_reads.was_read(workspace / "b.txt")


async def test_existing_directory_as_target_is_not_move_inside(registry: Registry, workspace: Path):
    out = await move(registry, "a.txt", "dir")
    assert out.is_error and out.error_code == "CONFLICT"
    assert str(workspace / "dir" / "a.txt") in out.content  # suggests the full path
    out = await move(registry, "a.txt", "dir", overwrite=True)
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert (workspace / "a.txt").exists() and (workspace / "dir" / "sub").is_dir()
    out = await move(registry, "a.txt", "dir/a.txt")
    assert not out.is_error and (workspace / "dir" / "a.txt").read_text() == "A"


async def test_move_a_directory_with_its_contents(registry: Registry, workspace: Path):
    inner = workspace / "dir" / "sub" / "inner.txt"
    registry.session.file_reads.record(inner)
    out = await move(registry, "dir", "moved")
    assert not out.is_error, out.content
    assert (workspace / "moved" / "sub" / "inner.txt").read_text() == "inner"
    assert not (workspace / "dir").exists()
    assert not registry.session.file_reads.was_read(inner)


async def test_directory_may_replace_only_an_empty_directory(registry: Registry, workspace: Path):
    out = await move(registry, "dir", "emptydir", overwrite=True)
    assert not out.is_error, out.content
    assert (workspace / "emptydir" / "sub" / "inner.txt").exists()
    (workspace / "other").mkdir()
    (workspace / "other" / "x").write_text("x")
    out = await move(registry, "emptydir", "other", overwrite=True)
    assert out.is_error and out.error_code == "INVALID_INPUT" and "non-empty" in out.content
    out = await move(registry, "other", "b.txt", overwrite=True)
    assert out.is_error and out.error_code == "INVALID_INPUT"


async def test_directory_into_itself_is_refused(registry: Registry, workspace: Path):
    out = await move(registry, "dir", "dir/sub/again")
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert (workspace / "dir" / "sub" / "inner.txt").exists()


async def test_missing_source_and_same_path(registry: Registry):
    out = await move(registry, "ghost.txt", "x.txt")
    assert out.is_error and out.error_code == "FILE_NOT_FOUND"
    out = await move(registry, "a.txt", "./a.txt")
    assert out.is_error and out.error_code == "INVALID_INPUT"


async def test_refuses_to_move_the_workspace(registry: Registry, workspace: Path):
    out = await move(registry, str(workspace), str(workspace.parent / "elsewhere"))
    assert out.is_error and out.error_code == "INVALID_PATH"
    assert workspace.is_dir()


async def test_symlink_is_moved_as_a_link(registry: Registry, workspace: Path):
    (workspace / "link").symlink_to(workspace / "a.txt")
    out = await move(registry, "link", "moved_link")
    assert not out.is_error, out.content
    assert (workspace / "moved_link").is_symlink() and (workspace / "a.txt").exists()
