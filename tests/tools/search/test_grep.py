"""Grep: real rg and the pure-Python fallback on the same real corpus (a git repo in tmp_path)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest

from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.search.grep import DEFAULT_HEAD_LIMIT, GrepTool, split_globs
from goat_jupyter.tools.search.grep_backend import RipgrepBackend
from goat_jupyter.tools.search.grep_fallback import PythonGrepBackend
from goat_jupyter.tools.search.ripgrep import find_rg, run_rg

APP = """import os

def main():
    return helper(-1)  # NOTE: tidy
    # --verbose flag

class Greeter:
    def hello(self):
        return "Hello"
"""
UTIL = """def helper(value):
    return value * 2


def unused():
    pass
"""


def write(path: Path, text: str | bytes, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, newline="")
    os.utime(path, (mtime, mtime))
    return path


def make_corpus(root: Path, *, git: bool = True) -> Path:
    """Files with distinct mtimes; ignored, hidden, binary, CRLF and long-line files among them."""
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root / ".gitignore", "ignored/\n*.log\n!keep.log\n", 1_000)
    write(root / ".ignore", "scratch.txt\n", 1_000)
    write(root / "scratch.txt", "main scratch\n", 1_002_000)
    write(root / "keep.log", "main kept\n", 1_000_050)
    write(root / "src" / "app.py", APP, 1_000_300)
    write(root / "src" / "util.py", UTIL, 1_000_200)
    write(root / "src" / "nested" / ".gitignore", "local.txt\n", 1_000)
    write(root / "src" / "nested" / "local.txt", "def main local\n", 1_000_400)
    write(root / "src" / "nested" / "kept.md", "# Notes\nmain idea\n\nTODO later\n", 1_000_500)
    write(root / "docs" / "guide.txt", "Hello world\r\nhello again\r\nbye\r\n", 1_000_100)
    write(root / "ignored" / "skip.py", "def main(): pass\n", 1_000_600)
    write(root / "debug.log", "main crashed\n", 1_000_700)
    write(root / ".hidden" / "secret.py", "def main(): secret\n", 1_000_800)
    write(root / ".dot.py", "main = 1\n", 1_000_900)
    write(root / "blob.bin", b"main\x00\x01\x02", 1_001_000)
    write(root / "wide.txt", "main " + "x" * 700 + "\n", 1_001_100)
    write(root / "many.txt", "".join(f"row {i} match\n" for i in range(300)), 900_000)
    return root


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return make_corpus(tmp_path)


@pytest.fixture
def registry(corpus: Path) -> Registry:
    return default_registry(cwd=corpus)


def python_registry(root: Path) -> Registry:
    registry = default_registry(cwd=root)
    registry.register(GrepTool(PythonGrepBackend()))
    return registry


async def grep(registry: Registry, pattern: str, **extra: Any) -> str:
    out = await registry.call("Grep", {"pattern": pattern, **extra})
    assert not out.is_error, out.content
    return out.content


async def test_default_backend_is_ripgrep(registry: Registry):
    out = await registry.call("Grep", {"pattern": "main"})
    assert out.metadata["backend"] == "ripgrep"


async def test_files_mode_newest_first_skips_ignored_hidden_binary(registry: Registry, corpus: Path):
    text = await grep(registry, "main")
    expected = ["wide.txt", "src/nested/kept.md", "src/app.py", "keep.log"]
    assert text.splitlines() == ["Found 4 files", *(str(corpus / p) for p in expected)]


async def test_ignore_files_only_apply_inside_a_git_repo(tmp_path: Path):
    root = make_corpus(tmp_path, git=False)
    lines = (await grep(default_registry(cwd=root), "main")).splitlines()
    assert str(root / "debug.log") in lines and str(root / "ignored/skip.py") in lines
    assert str(root / ".hidden/secret.py") not in lines
    assert str(root / "scratch.txt") not in lines  # .ignore files count without git too


async def test_content_mode_lines_and_numbers(registry: Registry, corpus: Path):
    app = corpus / "src" / "app.py"
    assert await grep(registry, "def ", path="src/app.py", output_mode="content") == (
        f"{app}:3:def main():\n{app}:8:    def hello(self):"
    )
    without = await grep(registry, "def ", path="src/app.py", output_mode="content", **{"-n": False})
    assert without == f"{app}:def main():\n{app}:    def hello(self):"


async def test_content_context_lines_and_separators(registry: Registry, corpus: Path):
    app, util = corpus / "src" / "app.py", corpus / "src" / "util.py"
    text = await grep(registry, "return", path="src", output_mode="content", type="py", **{"-B": 1})
    assert text.splitlines() == [
        f"{app}-3-def main():",
        f"{app}:4:    return helper(-1)  # NOTE: tidy",
        "--",
        f"{app}-8-    def hello(self):",
        f'{app}:9:        return "Hello"',
        "--",
        f"{util}-1-def helper(value):",
        f"{util}:2:    return value * 2",
    ]
    around = await grep(registry, "unused", path="src/util.py", output_mode="content", **{"-C": 1})
    assert around.splitlines() == [f"{util}-4-", f"{util}:5:def unused():", f"{util}-6-    pass"]
    after = await grep(registry, "unused", path="src/util.py", output_mode="content", **{"-A": 1, "-C": 3})
    assert after.splitlines()[0] == f"{util}-2-    return value * 2"
    assert after.splitlines()[-1] == f"{util}-6-    pass"


async def test_count_mode_with_total(registry: Registry, corpus: Path):
    text = await grep(registry, "return|def", output_mode="count", glob="*.py")
    assert text.splitlines() == [
        f"{corpus / 'src/app.py'}:4",
        f"{corpus / 'src/util.py'}:3",
        "Total: 7 matching lines in 2 files.",
    ]


async def test_glob_naming_ignored_or_hidden_files_finds_them(registry: Registry, corpus: Path):
    text = await grep(registry, "main", glob="*.log *.py")
    assert str(corpus / "debug.log") in text and str(corpus / ".dot.py") in text
    assert str(corpus / "wide.txt") not in text


async def test_type_filter_and_case(registry: Registry, corpus: Path):
    assert await grep(registry, "HELLO", type="txt") == f"No matches found for 'HELLO' in {corpus}."
    assert (await grep(registry, "HELLO", type="txt", **{"-i": True})).splitlines()[1:] == [
        str(corpus / "docs/guide.txt")
    ]
    assert (await grep(registry, "HELLO", **{"-i": True})).splitlines()[1:] == [
        str(corpus / "src/app.py"),
        str(corpus / "docs/guide.txt"),
    ]


async def test_an_ignored_folder_searched_on_purpose_is_searched(registry: Registry, corpus: Path):
    assert (await grep(registry, "main", path="ignored")).splitlines() == [
        "Found 1 file",
        str(corpus / "ignored/skip.py"),
    ]
    assert str(corpus / "debug.log") in await grep(registry, "main", path="debug.log")


async def test_crlf_lines_are_shown_without_carriage_returns(registry: Registry, corpus: Path):
    text = await grep(registry, "^hello", path="docs", output_mode="content")
    assert text == f"{corpus / 'docs/guide.txt'}:2:hello again"


async def test_pattern_starting_with_dash(registry: Registry, corpus: Path):
    assert (
        await grep(registry, "--verbose", output_mode="content")
        == f"{corpus / 'src/app.py'}:5:    # --verbose flag"
    )
    assert "src/app.py" in await grep(registry, "-1")


async def test_invalid_regex_reports_ripgreps_message(registry: Registry):
    out = await registry.call("Grep", {"pattern": "foo("})
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert out.content.startswith("Error: ") and "regex parse error" in out.content


async def test_unknown_type_is_an_input_error(registry: Registry):
    out = await registry.call("Grep", {"pattern": "x", "type": "nosuchtype"})
    assert out.is_error and out.error_code == "INVALID_INPUT" and "nosuchtype" in out.content


async def test_no_matches_is_not_an_error(registry: Registry, corpus: Path):
    out = await registry.call("Grep", {"pattern": "zebra_quux"})
    assert not out.is_error
    assert out.content == f"No matches found for 'zebra_quux' in {corpus}."


async def test_missing_path_is_file_not_found(registry: Registry):
    out = await registry.call("Grep", {"pattern": "x", "path": "nope"})
    assert out.is_error and out.error_code == "FILE_NOT_FOUND"


async def test_default_head_limit_and_note(registry: Registry, corpus: Path):
    out = await registry.call("Grep", {"pattern": "match", "path": "many.txt", "output_mode": "content"})
    lines = out.content.splitlines()
    assert len(lines) == DEFAULT_HEAD_LIMIT + 1
    assert lines[0] == f"{corpus / 'many.txt'}:1:row 0 match"
    assert "1-250 of 300" in lines[-1] and "offset=250" in lines[-1]
    assert out.metadata["truncated"] is True and out.metadata["total"] == 300


async def test_offset_and_head_limit_page_through(registry: Registry, corpus: Path):
    many = corpus / "many.txt"
    page = await grep(registry, "match", path="many.txt", output_mode="content", offset=10, head_limit=3)
    lines = page.splitlines()
    assert lines[:3] == [f"{many}:11:row 10 match", f"{many}:12:row 11 match", f"{many}:13:row 12 match"]
    assert "11-13 of 300" in lines[3] and "offset=13" in lines[3]
    everything = await grep(registry, "match", path="many.txt", output_mode="content", head_limit=0)
    assert len(everything.splitlines()) == 300
    tail = await grep(registry, "match", path="many.txt", output_mode="content", offset=298)
    assert tail.splitlines()[:2] == [f"{many}:299:row 298 match", f"{many}:300:row 299 match"]
    assert "Skipped the first 298" in tail
    beyond = await grep(registry, "match", path="many.txt", output_mode="content", offset=500)
    assert "offset 500" in beyond and "300" in beyond


@pytest.mark.parametrize("mode", ["content", "count", "files_with_matches"])
async def test_pages_join_up_to_the_whole_result(registry: Registry, mode: str):
    query = {"pattern": "return|def|main|match", "output_mode": mode, "-C": 1}
    whole = await registry.call("Grep", {**query, "head_limit": 0})
    total = whole.metadata["total"]
    assert total > 3
    body = whole.content.splitlines()
    expected = body[1:] if mode == "files_with_matches" else body[:total]
    pieces: list[str] = []
    for offset in range(0, total, 3):
        page = await registry.call("Grep", {**query, "offset": offset, "head_limit": 3})
        lines = page.content.splitlines()
        pieces += lines[1:4] if mode == "files_with_matches" else lines[:3]
    assert pieces[:total] == expected[:total]


async def test_files_mode_head_limit_keeps_the_newest(registry: Registry, corpus: Path):
    text = await grep(registry, "main|match", head_limit=2)
    assert text.splitlines()[:3] == [
        "Found 5 files",
        str(corpus / "wide.txt"),
        str(corpus / "src/nested/kept.md"),
    ]
    assert "1-2 of 5" in text


async def test_multiline(registry: Registry, corpus: Path):
    app = corpus / "src" / "app.py"
    pattern = r"def main\(\):\n\s+return"
    text = await grep(registry, pattern, output_mode="content", multiline=True)
    assert text == f"{app}:3:def main():\n{app}:4:    return helper(-1)  # NOTE: tidy"


@pytest.mark.parametrize("backend", ["rg", "python"])
async def test_newline_without_multiline_is_an_input_error(corpus: Path, backend: str):
    registry = default_registry(cwd=corpus) if backend == "rg" else python_registry(corpus)
    out = await registry.call("Grep", {"pattern": r"main\(\):\n"})
    assert out.is_error and out.error_code == "INVALID_INPUT" and "multiline" in out.content


async def test_long_lines_are_previewed(registry: Registry, corpus: Path):
    text = await grep(registry, "^main x", output_mode="content")
    assert text.endswith("[... omitted end of long line]")
    assert len(text) < len(str(corpus / "wide.txt:1:")) + 500 + 40


def test_split_globs():
    assert split_globs("*.py *.{ts,tsx}") == ("*.py", "*.{ts,tsx}")
    assert split_globs("*.py,*.md") == ("*.py", "*.md")
    assert split_globs(None) == ()


EQUAL_CASES: list[dict[str, Any]] = [
    {"pattern": "main"},
    {"pattern": "main", "output_mode": "content"},
    {"pattern": "main", "output_mode": "count"},
    {"pattern": "return", "output_mode": "content", "-C": 2},
    {"pattern": "return", "output_mode": "content", "-A": 1, "-n": False},
    {"pattern": "HELLO", "-i": True, "output_mode": "content"},
    {"pattern": "def", "type": "py", "output_mode": "count"},
    {"pattern": "main", "glob": "*.log *.py"},
    {"pattern": "main", "glob": "!*.txt", "output_mode": "content"},
    {"pattern": "main", "glob": "src/**/*.md"},
    {"pattern": "--verbose", "output_mode": "content"},
    {"pattern": r"def \w+\(", "output_mode": "content", "-B": 1},
    {"pattern": r"def main\(\):\n\s+return", "multiline": True, "output_mode": "content"},
    {"pattern": r"return.*?\n", "multiline": True, "output_mode": "count"},
    {"pattern": "o", "multiline": True, "output_mode": "count"},
    {"pattern": "match", "path": "many.txt", "output_mode": "content", "offset": 5, "head_limit": 7},
    {"pattern": "return|def", "output_mode": "content", "-C": 1, "offset": 3, "head_limit": 9},
    {"pattern": "^main x", "output_mode": "content"},
    {"pattern": "hello", "path": "docs/guide.txt", "output_mode": "content", "-i": True},
    {"pattern": "main", "path": "ignored"},
    {"pattern": "secret", "path": ".hidden", "output_mode": "count"},
    {"pattern": "zebra_quux"},
]


@pytest.mark.parametrize("case", EQUAL_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
async def test_python_fallback_matches_ripgrep(corpus: Path, case: dict[str, Any]):
    rg_path = find_rg()
    assert rg_path is not None
    with_rg = default_registry(cwd=corpus)
    with_rg.register(GrepTool(RipgrepBackend(rg_path)))
    by_rg = await with_rg.call("Grep", case)
    by_python = await python_registry(corpus).call("Grep", case)
    assert by_rg.metadata["backend"] == "ripgrep" and by_python.metadata["backend"] == "python"
    assert by_python.content == by_rg.content
    assert by_python.metadata["total"] == by_rg.metadata["total"]


async def test_fallback_matches_ripgrep_outside_git(tmp_path: Path):
    root = make_corpus(tmp_path, git=False)
    by_rg = await default_registry(cwd=root).call("Grep", {"pattern": "main", "output_mode": "count"})
    by_python = await python_registry(root).call("Grep", {"pattern": "main", "output_mode": "count"})
    assert by_python.content == by_rg.content


async def test_fallback_invalid_regex_is_an_input_error(corpus: Path):
    out = await python_registry(corpus).call("Grep", {"pattern": "foo("})
    assert out.is_error and out.error_code == "INVALID_INPUT"


async def test_runaway_output_is_cut_at_a_line_end(corpus: Path):
    rg_path = find_rg()
    assert rg_path is not None
    result = await run_rg(rg_path, ["--no-config", "-n", "match", str(corpus / "many.txt")], max_stdout=1000)
    assert result.overflowed
    assert 0 < len(result.stdout) <= 1000 + (1 << 20) and result.stdout.endswith(b"\n")
    assert result.stdout.startswith(b"1:row 0 match\n")


async def test_cancelling_a_search_kills_rg():
    rg_path = find_rg()
    assert rg_path is not None
    task = asyncio.create_task(run_rg(rg_path, ["--no-config", "--files", "--hidden", "--no-ignore", "/"]))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if rg_children():
            break
    assert rg_children(), "rg should be running"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not rg_children()


def rg_children() -> list[psutil.Process]:
    alive = [p for p in psutil.Process().children(recursive=True) if p.is_running()]
    return [p for p in alive if p.status() != psutil.STATUS_ZOMBIE and p.name() == "rg"]
