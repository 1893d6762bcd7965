"""Glob cases from gemini-cli packages/core/src/tools/glob.test.ts and the globstar behaviour users
expect (opencode's glob tool and Claude Code's docs list every file below for `dir/**`). Our own code."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.search.glob import walk_lister

TREE = [
    "src/top.py",
    "src/a/mid.py",
    "src/a/b/deep.py",
    "src/.hidden/h.py",
    "docs/readme.md",
    "root.txt",
    "app/[id]/page.tsx",
    "app/i/page.tsx",
    "app/(dashboard)/layout.tsx",
    "file[1].txt",
    "file1.txt",
    "src/app/[test]/(dashboard)/testing/components/code.tsx",
]


@pytest.fixture(params=["rg", "walk"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Registry:
    for rel in TREE:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    registry = default_registry(cwd=tmp_path)
    if request.param == "walk":  # the pure-Python lister must agree with rg's
        from goat_jupyter.tools.search.glob import GlobTool

        registry.register(GlobTool(lister=walk_lister))
    return registry


async def found(registry: Registry, pattern: str, **extra: str) -> set[str]:
    out = await registry.call("Glob", {"pattern": pattern, **extra})
    assert not out.is_error, out.content
    if out.metadata["count"] == 0:
        return set()
    root = str(registry.session.workspace) + "/"
    return {line.removeprefix(root) for line in out.content.splitlines()}


# gemini-cli glob.test.ts "deep globstar pattern"; issue 16: `src/**` must list nested files.
async def test_dir_globstar_lists_every_file_below(registry: Registry) -> None:
    assert await found(registry, "src/**") == {rel for rel in TREE if rel.startswith("src/")}
    assert await found(registry, "src/**") == await found(registry, "src/**/*")


async def test_bare_globstar_lists_everything(registry: Registry) -> None:
    assert await found(registry, "**") == set(TREE)
    assert await found(registry, "**", path="docs") == {"docs/readme.md"}


async def test_globstar_in_alternatives_and_exclusions(registry: Registry) -> None:
    assert await found(registry, "src/a/**|!**/deep.py") == {"src/a/mid.py"}


# gemini-cli glob.test.ts "special characters like [] and () in the path".
async def test_next_js_route_folders_are_found_literally(registry: Registry) -> None:
    assert await found(registry, "app/[id]/page.tsx") == {"app/[id]/page.tsx"}
    assert await found(registry, "app/(dashboard)/layout.tsx") == {"app/(dashboard)/layout.tsx"}
    deep = "src/app/[test]/(dashboard)/testing/components/code.tsx"
    assert await found(registry, deep) == {deep}
    assert await found(registry, "app/[id]/*.tsx") == {"app/[id]/page.tsx"}


# The same after a globstar, where no folder can be checked up front: the literal reading wins when
# it names files, else the brackets stay a character class.
async def test_literal_brackets_after_a_globstar(registry: Registry) -> None:
    assert await found(registry, "**/[id]/page.tsx") == {"app/[id]/page.tsx"}
    assert await found(registry, "**/(dashboard)/*.tsx") == {"app/(dashboard)/layout.tsx"}
    assert await found(registry, "**/[ix]/page.tsx") == {"app/i/page.tsx"}


# gemini-cli glob.test.ts "special characters in the name".
async def test_file_name_with_brackets_is_found_literally(registry: Registry) -> None:
    assert await found(registry, "file[1].txt") == {"file[1].txt"}


async def test_brackets_stay_a_class_when_no_such_path_exists(registry: Registry) -> None:
    assert await found(registry, "file[0-9].txt") == {"file1.txt"}
    assert await found(registry, "app/*/page.tsx") == {"app/[id]/page.tsx", "app/i/page.tsx"}
