"""Bash tool overhead: `echo hi` through registry.call vs subprocess.run(["bash", "-c", ...]).

Both run N times, interleaved, in the same process; prints the medians and their ratio (target <= 1.5x).
Usage: python benchmarks/bench_bash.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goat_jupyter.tools import Registry, default_registry

COMMAND = "echo hi"
TARGET_RATIO = 1.5


async def time_tool(registry: Registry) -> float:
    started = time.perf_counter()
    out = await registry.call("Bash", {"command": COMMAND})
    elapsed = time.perf_counter() - started
    assert out.content == "hi\n", out.content
    return elapsed


def time_subprocess(cwd: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(["bash", "-c", COMMAND], cwd=cwd, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - started
    assert done.stdout == "hi\n"
    return elapsed


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as workspace:
        registry = default_registry(cwd=workspace)
        for _ in range(5):  # warm-up: imports, first process, child watcher
            await time_tool(registry)
            time_subprocess(workspace)
        ours: list[float] = []
        baseline: list[float] = []
        for _ in range(runs):
            ours.append(await time_tool(registry))
            baseline.append(time_subprocess(workspace))
    ours_ms = statistics.median(ours) * 1000
    base_ms = statistics.median(baseline) * 1000
    ratio = ours_ms / base_ms
    # Each pair ran back to back, so the median of per-pair ratios is robust to load changing mid-run.
    pair_ratio = statistics.median(o / b for o, b in zip(ours, baseline, strict=True))
    print(f"runs each (interleaved):           {runs}")
    print(f"Bash tool via registry.call:       median {ours_ms:.2f} ms")
    print(f"subprocess.run bash -c (baseline): median {base_ms:.2f} ms")
    print(f"ratio of medians:                  {ratio:.2f}x")
    verdict = "OK" if pair_ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"ratio (median of per-pair ratios): {pair_ratio:.2f}x (target <= {TARGET_RATIO}x) {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="50 runs each")
    options = parser.parse_args()
    asyncio.run(main(50 if options.quick else options.runs))
