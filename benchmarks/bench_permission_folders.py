"""Permission check of a folder operation: evaluate() for Delete of a folder with N files (its
contents are checked against the deny rules and for configuration) vs os.walk of the same folder.

Both run interleaved in one process; prints the medians and their ratio (target <= 4x: the check
lists the folder once and matches each entry against the rules).
Usage: python benchmarks/bench_permission_folders.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goat_jupyter.permissions.engine import PermissionContext, evaluate

TARGET_RATIO = 4.0
RULE_SETS = {
    "no rules": (),
    "Edit(./protected/**)": ("Edit(./protected/**)",),
    "Edit(**/*.pem) (every entry matched)": ("Edit(**/*.pem)",),
}


def make_tree(root: Path, files: int) -> Path:
    big = root / "ws" / "big"
    per_folder = 100
    for index in range(files):
        folder = big / str(index // per_folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{index}.txt").touch()
    return root / "ws"


def time_walk(folder: Path) -> float:
    started = time.perf_counter()
    sum(len(names) for _, _, names in os.walk(folder))
    return time.perf_counter() - started


def time_evaluate(context: PermissionContext) -> float:
    started = time.perf_counter()
    decision = evaluate("Delete", {"path": "big", "recursive": True}, "mutating", context)
    elapsed = time.perf_counter() - started
    assert decision.behavior == "allow", decision
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        ws = make_tree(Path(temp), options.files)
        for label, deny in RULE_SETS.items():
            context = PermissionContext(ws, mode="bypassPermissions", deny=deny)
            walks, checks = [], []
            for _ in range(options.runs):
                walks.append(time_walk(ws / "big"))
                checks.append(time_evaluate(context))
            walk, check = statistics.median(walks), statistics.median(checks)
            print(
                f"{label:40s} walk {walk * 1000:7.1f} ms  evaluate {check * 1000:7.1f} ms  "
                f"ratio {check / walk:4.1f}x (target <= {TARGET_RATIO}x)"
            )


if __name__ == "__main__":
    main()
