"""Edit: exact replacement, match-count errors, read-before-write, format preservation, snippets and diffs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def edit(registry: Registry, path: Path | str, old: str, new: str, **extra: object):
    return await registry.call(
        "Edit", {"file_path": str(path), "old_string": old, "new_string": new, **extra}
    )


async def read(registry: Registry, path: Path | str):
    return await registry.call("Read", {"file_path": str(path)})


async def read_file(registry: Registry, path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    out = await read(registry, path)
    assert not out.is_error, out.content
    return path


async def test_replaces_one_exact_match(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "m.py", "def f():\n    return 1\n")
    out = await edit(registry, target, "return 1", "return 2")
    assert not out.is_error
    assert target.read_text() == "def f():\n    return 2\n"
    assert out.content.startswith(f"Edited {target}")
    assert "2\t    return 2" in out.content
    assert out.metadata["path"] == str(target)
    diff = out.metadata["diff"]
    assert diff.startswith(f"--- {target}\n+++ {target}\n@@")
    assert "-    return 1\n+    return 2" in diff


async def test_snippet_shows_about_four_lines_of_context(registry: Registry, tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 21))
    target = await read_file(registry, tmp_path / "n.txt", text)
    out = await edit(registry, target, "line 10\n", "ten\nTEN\n")
    numbered = [line for line in out.content.splitlines() if "\t" in line]
    assert numbered[0] == "6\tline 6"
    assert "10\tten" in numbered and "11\tTEN" in numbered
    assert numbered[-1] in ("15\tline 14", "16\tline 15")
    assert all(not line.startswith("5\t") for line in numbered)


async def test_no_match_is_an_error_and_leaves_the_file_byte_identical(
    registry: Registry, tmp_path: Path
) -> None:
    original = b"alpha\r\nbeta\r\n"
    target = await read_file(registry, tmp_path / "a.txt", original)
    stamp = target.stat().st_mtime_ns
    out = await edit(registry, target, "gamma", "delta")
    assert out.is_error and out.metadata["error_code"] == "INVALID_INPUT"
    assert "not found" in out.content
    assert target.read_bytes() == original and target.stat().st_mtime_ns == stamp


async def test_several_matches_need_context_or_replace_all(registry: Registry, tmp_path: Path) -> None:
    original = "x = 1\ny = 1\nz = 1\n"
    target = await read_file(registry, tmp_path / "a.py", original)
    out = await edit(registry, target, "= 1", "= 2")
    assert out.is_error
    assert "3 times" in out.content and "replace_all" in out.content and "surrounding" in out.content
    assert target.read_text() == original


async def test_replace_all_changes_every_match(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "a.py", "x = 1\ny = 1\nz = 1\n")
    out = await edit(registry, target, "= 1", "= 2", replace_all=True)
    assert not out.is_error
    assert target.read_text() == "x = 2\ny = 2\nz = 2\n"
    assert "3" in out.content and out.metadata["replacements"] == 3


async def test_identical_strings_are_an_error(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "a.txt", "same\n")
    out = await edit(registry, target, "same", "same")
    assert out.is_error and out.metadata["error_code"] == "INVALID_INPUT"


async def test_notebooks_point_to_notebook_edit(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "n.ipynb").write_text("{}")
    out = await edit(registry, tmp_path / "n.ipynb", "{}", "[]")
    assert out.is_error and "NotebookEdit" in out.content
    assert (tmp_path / "n.ipynb").read_text() == "{}"


async def test_empty_old_string_creates_a_missing_file(registry: Registry, tmp_path: Path) -> None:
    out = await edit(registry, "new/dir/file.txt", "", "hello\nworld\n")
    target = tmp_path / "new" / "dir" / "file.txt"
    assert not out.is_error
    assert target.read_text() == "hello\nworld\n"
    assert str(target) in out.content and "+hello" in out.metadata["diff"]
    again = await edit(registry, target, "world", "there")  # created by Edit: no re-read needed
    assert not again.is_error and target.read_text() == "hello\nthere\n"


async def test_empty_old_string_on_a_non_empty_file_is_an_error(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "a.txt", "content\n")
    out = await edit(registry, target, "", "more")
    assert out.is_error and out.metadata["error_code"] == "INVALID_INPUT"
    assert target.read_text() == "content\n"


async def test_empty_old_string_fills_an_empty_file(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "empty.txt", "")
    out = await edit(registry, target, "", "filled\n")
    assert not out.is_error and target.read_text() == "filled\n"


async def test_missing_file_is_not_found(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("")
    out = await edit(registry, "config.yml", "a", "b")
    assert out.metadata["error_code"] == "FILE_NOT_FOUND"
    assert str(tmp_path / "config.yaml") in out.content and str(tmp_path) in out.content


async def test_unread_file_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\n")
    out = await edit(registry, target, "one", "two")
    assert out.metadata["error_code"] == "CONFLICT"
    assert target.read_text() == "one\n"


async def test_file_modified_after_read_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "a.txt", "one\n")
    target.write_text("one, changed by the user\n")
    later = target.stat().st_mtime_ns + 3_000_000_000
    os.utime(target, ns=(later, later))
    out = await edit(registry, target, "one", "two")
    assert out.metadata["error_code"] == "CONFLICT"
    assert target.read_text() == "one, changed by the user\n"


async def test_touched_but_identical_file_is_still_editable(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "a.txt", "one\n")
    later = target.stat().st_mtime_ns + 3_000_000_000
    os.utime(target, ns=(later, later))  # same bytes: the content hash proves nothing changed
    out = await edit(registry, target, "one", "two")
    assert not out.is_error and target.read_text() == "two\n"


async def test_crlf_and_mode_survive(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "tool.sh"
    target.write_bytes(b"#!/bin/sh\r\necho one\r\necho two\r\n")
    target.chmod(0o755)
    await read(registry, target)
    out = await edit(registry, target, "echo one\necho two", "echo uno\necho dos\necho tres")
    assert not out.is_error, out.content
    assert target.read_bytes() == b"#!/bin/sh\r\necho uno\r\necho dos\r\necho tres\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert "\r" not in out.metadata["diff"]


async def test_bom_and_invalid_utf8_bytes_survive(registry: Registry, tmp_path: Path) -> None:
    original = b"\xef\xbb\xbfname = 'caf\xe9'\nvalue = 1\n"  # a stray latin-1 byte on line 1
    target = await read_file(registry, tmp_path / "mixed.py", original)
    out = await edit(registry, target, "value = 1", "value = 2")
    assert not out.is_error
    assert target.read_bytes() == b"\xef\xbb\xbfname = 'caf\xe9'\nvalue = 2\n"


async def test_mixed_line_endings_are_left_as_they_are(registry: Registry, tmp_path: Path) -> None:
    target = await read_file(registry, tmp_path / "m.txt", b"a\r\nb\nc\r\n")
    await edit(registry, target, "b", "B")
    assert target.read_bytes() == b"a\r\nB\nc\r\n"


async def test_relative_and_tilde_paths(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    await read_file(registry, tmp_path / "src" / "r.txt", "rel\n")
    out = await edit(registry, "src/r.txt", "rel", "REL")
    assert str(tmp_path / "src" / "r.txt") in out.content
    monkeypatch.setenv("HOME", str(tmp_path / "src"))
    home_out = await edit(registry, "~/r.txt", "REL", "home")
    assert not home_out.is_error and (tmp_path / "src" / "r.txt").read_text() == "home\n"


async def test_binary_file_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "blob.bin2"
    target.write_bytes(b"ab\x00cd")
    registry.session.file_reads.record(target)  # Read refuses binaries, so stamp it directly
    out = await edit(registry, target, "ab", "xy")
    assert out.is_error and "binary" in out.content
    assert target.read_bytes() == b"ab\x00cd"


async def test_directory_is_refused(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await edit(registry, tmp_path / "d", "a", "b")
    assert out.is_error and out.metadata["error_code"] == "INVALID_PATH"
