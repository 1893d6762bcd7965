"""LS: real folders, symlinks and mtimes; ordering, types, hidden entries, recursion and the cap."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.files.ls import MAX_ENTRIES


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "zeta").mkdir()
    (tmp_path / "Alpha").mkdir()
    (tmp_path / "Alpha" / "inner.txt").write_text("12345")
    (tmp_path / "Alpha" / "deeper").mkdir()
    (tmp_path / "Alpha" / "deeper" / "leaf.md").write_text("#")
    (tmp_path / "b.txt").write_text("hello")
    (tmp_path / "a.py").write_text("")
    (tmp_path / ".secret").write_text("s")
    (tmp_path / ".cache").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "Alpha")
    os.utime(tmp_path / "b.txt", (1_700_000_000, 1_700_000_000))
    return tmp_path


@pytest.fixture
def registry(tree: Path) -> Registry:
    return default_registry(cwd=tree)


def names(output_metadata: dict[str, object]) -> list[tuple[str, str]]:
    entries = output_metadata["entries"]
    assert isinstance(entries, list)
    return [(e["name"], e["type"]) for e in entries]  # type: ignore[index]


async def test_directories_first_then_by_name_with_types(registry: Registry, tree: Path):
    out = await registry.call("LS", {})
    assert not out.is_error
    assert names(out.metadata) == [
        ("Alpha", "directory"),
        ("zeta", "directory"),
        ("a.py", "file"),
        ("b.txt", "file"),
        ("link", "symlink"),
    ]
    lines = out.content.splitlines()
    assert lines[0].startswith(str(tree))
    assert lines[1].startswith("directory") and lines[1].endswith("Alpha/")
    assert lines[-1].endswith(f"link -> {tree / 'Alpha'}")


async def test_sizes_and_iso_modified_times(registry: Registry, tree: Path):
    out = await registry.call("LS", {"path": str(tree)})
    by_name = {e["name"]: e for e in out.metadata["entries"]}
    assert by_name["b.txt"]["size"] == 5 and by_name["a.py"]["size"] == 0
    modified = datetime.fromisoformat(by_name["b.txt"]["modified"])
    assert modified.tzinfo is not None and modified.timestamp() == 1_700_000_000
    line = next(line for line in out.content.splitlines() if line.endswith(" b.txt"))
    assert " 5 " in line and by_name["b.txt"]["modified"] in line


async def test_hidden_entries_only_on_request(registry: Registry):
    out = await registry.call("LS", {"include_hidden": True})
    assert names(out.metadata)[:3] == [(".cache", "directory"), ("Alpha", "directory"), ("zeta", "directory")]
    assert (".secret", "file") in names(out.metadata)


async def test_recursive_is_depth_first_with_relative_names(registry: Registry):
    out = await registry.call("LS", {"recursive": True})
    assert names(out.metadata) == [
        ("Alpha", "directory"),
        ("Alpha/deeper", "directory"),
        ("Alpha/deeper/leaf.md", "file"),
        ("Alpha/inner.txt", "file"),
        ("zeta", "directory"),
        ("a.py", "file"),
        ("b.txt", "file"),
        ("link", "symlink"),  # listed, not entered
    ]


async def test_caps_at_1000_entries_with_a_note(tmp_path: Path):
    for i in range(MAX_ENTRIES + 5):
        (tmp_path / f"f{i:04d}").write_text("")
    out = await default_registry(cwd=tmp_path).call("LS", {"path": "."})
    assert len(out.metadata["entries"]) == MAX_ENTRIES
    assert out.metadata["truncated"] is True
    assert "1000" in out.content.splitlines()[-1]
    assert out.metadata["entries"][-1]["name"] == "f0999"


async def test_exactly_1000_entries_is_not_truncated(tmp_path: Path):
    for i in range(MAX_ENTRIES):
        (tmp_path / f"f{i:04d}").write_text("")
    out = await default_registry(cwd=tmp_path).call("LS", {})
    assert out.metadata["truncated"] is False
    assert "Stopped" not in out.content


async def test_recursive_listing_stops_at_the_cap(tmp_path: Path):
    for folder in range(30):
        for i in range(50):
            (tmp_path / f"d{folder:02d}").mkdir(exist_ok=True)
            (tmp_path / f"d{folder:02d}" / f"f{i:02d}").write_text("")
    out = await default_registry(cwd=tmp_path).call("LS", {"recursive": True})
    assert len(out.metadata["entries"]) == MAX_ENTRIES and out.metadata["truncated"] is True


async def test_missing_path_is_file_not_found(registry: Registry):
    out = await registry.call("LS", {"path": "nope"})
    assert out.is_error and out.error_code == "FILE_NOT_FOUND"


async def test_a_file_path_gives_that_single_entry(registry: Registry, tree: Path):
    out = await registry.call("LS", {"path": "b.txt"})
    assert not out.is_error
    assert names(out.metadata) == [("b.txt", "file")]
    assert out.content.splitlines()[0] == str(tree / "b.txt")


async def test_empty_directory(registry: Registry, tree: Path):
    out = await registry.call("LS", {"path": "zeta"})
    assert out.content.splitlines() == [
        f"{tree / 'zeta'} (0 directories, 0 other entries)",
        "(empty directory)",
    ]


async def test_symlink_to_directory_as_path_lists_its_target(registry: Registry):
    out = await registry.call("LS", {"path": "link"})
    assert names(out.metadata) == [("deeper", "directory"), ("inner.txt", "file")]
