"""Paths as people read them: workspace-relative, `~` for home, nothing else touched (issue 22, point 6)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.ui.summary import relative

HOME = os.path.expanduser("~")
WS = os.path.join(HOME, "work", "proj")
names = st.text(alphabet="abcxyz_.-0123456789", min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..")
)


def test_workspace_paths_lose_the_workspace_and_home_paths_get_a_tilde() -> None:
    text = f"--- {WS}/data/a.csv\n+++ {WS}/data/a.csv\nalso {HOME}/.bashrc and /etc/hosts"
    assert relative(text, WS) == "--- data/a.csv\n+++ data/a.csv\nalso ~/.bashrc and /etc/hosts"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"/mnt{WS}/a.txt", f"/mnt{WS}/a.txt"),  # the workspace's text inside a longer path
        (f"x{HOME}/a", f"x{HOME}/a"),
        (f"{WS}-old/a.txt", "~/work/proj-old/a.txt"),  # a sibling whose name starts like the workspace
        (f"{WS}2/a.txt", "~/work/proj2/a.txt"),
    ],
)
def test_a_path_that_only_contains_the_workspace_is_not_cut(text: str, shown: str) -> None:
    assert relative(text, WS) == shown


@given(st.lists(names, min_size=1, max_size=4), st.sampled_from(['"', "'", "(", " ", "\n", "=", ""]))
def test_any_file_under_the_workspace_reads_relative_wherever_it_stands(
    parts: list[str], before: str
) -> None:
    inner = os.path.join(*parts)
    shown = relative(f"{before}{os.path.join(WS, inner)} end", WS)
    assert shown == f"{before}{inner} end"
    assert HOME not in shown


def test_an_empty_or_root_workspace_changes_only_home() -> None:
    assert relative("/etc/a", "") == "/etc/a" and relative("/etc/a", os.sep) == "/etc/a"
    assert relative(f"{HOME}/a", "") == "~/a"


def test_the_trust_question_names_the_folder_not_its_absolute_path() -> None:
    """Issue 33 point 13: the folder by its name, the full path only on hover."""
    from pathlib import Path

    from goat_jupyter.config.project import Item
    from goat_jupyter.ui.trust import folder_name, items_html

    folder = Path(WS)
    item = Item("allow", "allow:Bash(make:*)", "allows Bash(make:*)", ".goat/settings.json")
    shown = items_html(folder, [item])
    assert "This notebook's folder, <code title=" in shown and ">proj</code>" in shown
    assert shown.count(WS) == 1 and f'title="{WS}"' in shown, "the path only in the tooltip"
    assert folder_name(Path("/")) == "/"
