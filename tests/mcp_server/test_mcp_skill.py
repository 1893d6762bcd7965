"""The SKILL.md shipped in the package and the command that prints it."""

from __future__ import annotations

import subprocess
import sys

from tests.server_harness import REPO_ROOT, server_env


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = server_env(REPO_ROOT / "tests")
    return subprocess.run([sys.executable, "-m", "goat_jupyter.mcp_server", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)  # fmt: skip


def test_the_skill_is_printed_in_the_skill_format() -> None:
    done = run("skill")
    assert done.returncode == 0
    head = done.stdout.split("---")[1]
    assert "name: jupyter-live-notebook" in head and "description: " in head
    for tool in ("list_notebooks", "read_notebook", "edit_cell", "run_cell", "stop", "inspect_variable"):
        assert f"`{tool}" in done.stdout
    assert "goat:locked" in done.stdout and "read_notebook` first" in done.stdout


def test_anything_else_is_a_usage_error() -> None:
    for args in ((), ("skills",), ("skill", "extra")):
        done = run(*args)
        assert done.returncode == 2 and "usage:" in done.stderr and not done.stdout
