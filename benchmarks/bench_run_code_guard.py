"""RunCode's protected-path guard (processes/sandbox_guard.py): a walk of the workspace before and
after each run, read-only binds for what exists. Times `true` through RunCode on a workspace with
many files, with the guard and with it switched off (the same run otherwise), interleaved; prints
the medians and their ratio, and the cost of one walk.

Usage: python benchmarks/bench_run_code_guard.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import goat_jupyter.tools.shell.run_code as run_code
from goat_jupyter.processes.sandbox_guard import Snapshot, index_of, protected_entries
from goat_jupyter.tools import Registry, default_registry

FILES_PER_FOLDER = 20


def make_workspace(root: Path, files: int) -> None:
    """`files` plain files in folders of 20, a .venv with .pth files, a .git with 1000 objects."""
    for index in range(files):
        folder = root / "src" / f"d{index // (FILES_PER_FOLDER * 10)}" / f"e{index // FILES_PER_FOLDER}"
        if index % FILES_PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"f{index}.py").write_text("")
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for index in range(5):
        (site / f"p{index}.pth").write_text("")
    objects = root / ".git" / "objects"
    objects.mkdir(parents=True)
    for index in range(1000):
        (objects / f"o{index}").write_text("")


class Switch:
    """Turns the guard off by handing RunCode an empty snapshot and nothing to remove."""

    def __init__(self) -> None:
        self.take, self.remove = run_code.take_snapshot, run_code.remove_left_behind

    def set(self, on: bool) -> None:
        patched: Any = run_code
        patched.take_snapshot = self.take if on else (lambda ws: Snapshot(Path(ws)))  # pyright: ignore[reportUnknownLambdaType]
        patched.remove_left_behind = self.remove if on else (lambda snapshot: [])  # pyright: ignore[reportUnknownLambdaType]


async def timed(registry: Registry) -> float:
    started = time.perf_counter()
    out = await registry.call("RunCode", {"language": "bash", "code": "true"})
    assert not out.is_error, out.content
    return time.perf_counter() - started


async def main(files: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_workspace(root, files)
        await asyncio.sleep(1.5)  # folders changed within the last second are listed again (GRACE_NS)
        started = time.perf_counter()
        found = protected_entries(root)
        index_of(root).refresh()
        walk_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        index_of(root).refresh()
        refresh_ms = (time.perf_counter() - started) * 1000
        registry = default_registry(cwd=root)
        switch = Switch()
        on: list[float] = []
        off: list[float] = []
        for index in range(runs + 3):
            switch.set(True)
            with_guard = await timed(registry)
            switch.set(False)
            without = await timed(registry)
            if index >= 3:  # warm-up
                on.append(with_guard)
                off.append(without)
        switch.set(True)
    on_ms, off_ms = statistics.median(on) * 1000, statistics.median(off) * 1000
    print(f"workspace: {files} files, {len(found)} protected entries found")
    print(f"one full walk of the workspace:  {walk_ms:.1f} ms")
    print(f"one walk with nothing changed:   {refresh_ms:.1f} ms (stat per folder)")
    print(f"RunCode `true` with the guard:   median {on_ms:.1f} ms")
    print(f"RunCode `true` without it:       median {off_ms:.1f} ms")
    print(f"ratio: {on_ms / off_ms:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    asyncio.run(main(options.files, options.runs))
