"""What "Revert this run" costs before RunCell code runs: keeping the namespace before-image.

Baseline: the in-place change itself (`df.drop(columns=[...], inplace=True)`, `arr *= 2`,
`items.append(0)`) and a bare `obj.copy()`. Rebinding costs nothing (a reference); only objects the
code may change in place are copied, up to `revert_memory_mb` (default 200 MB).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goat_jupyter.kernel.namespace_undo import keep_namespace

BUDGET = 200 * 1_000_000


def median_ms(work: Callable[[], object], runs: int) -> float:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def frame(megabytes: int) -> pd.DataFrame:
    rows = megabytes * 1_000_000 // 32
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"x": rng.random(rows), "y": rng.random(rows), "z": rng.random(rows), "w": np.arange(rows)}
    )


def cases() -> list[tuple[str, Any, str, Callable[[Any], object]]]:
    found: list[tuple[str, Any, str, Callable[[Any], object]]] = []
    for size in (10, 50, 150):
        found.append(
            (
                f"DataFrame {size} MB (4 float/int columns)",
                frame(size),
                'df.drop(columns=["x"], inplace=True)',
                lambda df: df.drop(columns=["x"]),
            )
        )
    found.append(("ndarray 80 MB", np.zeros(10_000_000), "df *= 2", lambda arr: arr * 2))
    strings = pd.DataFrame({"s": [f"row {i}" for i in range(500_000)]})
    found.append(("DataFrame of 500k strings", strings, 'df["s"] = 1', lambda df: df.assign(s=1)))
    found.append(("list of 1M ints", list(range(1_000_000)), "df.append(0)", lambda items: list(items)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    keep_namespace({"df": frame(1)}, "df.x = 1", "warm-up", BUDGET, None)  # pandas' first-call costs
    print(f"{'object':38} {'keep (size+copy)':>17} {'bare copy':>10} {'the change':>11} {'keep/copy':>9}")
    for label, value, source, change in cases():
        namespace: dict[str, object] = {"df": value}
        kept = median_ms(lambda: keep_namespace(namespace, source, "bench", BUDGET, None), args.runs)  # noqa: B023
        copied = median_ms(lambda: value.copy(), args.runs)  # noqa: B023
        changed = median_ms(lambda: change(value), args.runs)  # noqa: B023
        print(f"{label:38} {kept:14.1f} ms {copied:7.1f} ms {changed:8.1f} ms {kept / copied:8.2f}x")
    rebinding = {"counter": 0, "df": frame(150)}
    ms = median_ms(
        lambda: keep_namespace(rebinding, "counter += 100\ndel df", "bench", BUDGET, None), args.runs
    )
    print(
        f"rebinding only (`counter += 100; del df`, a 150 MB frame): {ms * 1000:.0f} µs (references, no copy)"
    )


if __name__ == "__main__":
    main()
