"""KernelInspect's summary of a large DataFrame vs what a notebook shows for it anyway.

The summary (shape, per-column dtype and nulls, memory, head) of a 2,000,000 x 12 frame with a string
column, vs the baseline `repr(df)` (pandas' own truncated display, what evaluating `df` in a cell
prints) plus `df.isna().sum()` (the null counts a user would ask for). Interleaved rounds; prints the
medians, the ratio and the summary's length. Target: <= 2x the baseline, output bounded.
Run: python benchmarks/bench_kernel_inspect.py [--rows N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled

import numpy as np
import pandas as pd

from goat_jupyter.represent import represent as summarize


def frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{i}": rng.random(rows) for i in range(10)})
    df["n"] = np.arange(rows)
    df["label"] = np.where(df["n"] % 3 == 0, "a", "bb")
    df.loc[df["n"] % 7 == 0, "x0"] = np.nan
    return df


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description="KernelInspect on a large DataFrame vs repr + null counts")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    df = frame(args.rows)
    ours: list[float] = []
    baseline: list[float] = []
    for _ in range(args.rounds):
        ours.append(timed(lambda: summarize(df)))
        baseline.append(timed(lambda: (repr(df), df.isna().sum())))
    ours_ms, base_ms = statistics.median(ours) * 1000, statistics.median(baseline) * 1000
    print(f"frame: {df.shape}, {df.memory_usage(deep=False).sum() / 2**20:.0f} MB")
    print(f"summarize(df): {ours_ms:.1f} ms, {len(summarize(df))} characters")
    print(f"baseline repr(df) + df.isna().sum(): {base_ms:.1f} ms")
    print(f"ratio: {ours_ms / base_ms:.2f}x")


if __name__ == "__main__":
    main()
