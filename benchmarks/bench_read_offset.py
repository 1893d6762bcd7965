"""Read 3 lines deep in a big text file: goat's streamed Read vs `tail -n +N | head -n 3`.

Prints the time of each (best of --repeat), their ratio, and how much memory our process needed
(peak traced Python allocations and the RSS change). The data file lives in benchmarks/.data/
(gitignored) and is reused when present.

    python benchmarks/bench_read_offset.py              # 1024 MB
    python benchmarks/bench_read_offset.py --size-mb 64
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled
from goat_jupyter.tools import Registry, default_registry

DATA_DIR = Path(__file__).parent / ".data"
LINE_WIDTH = 100  # bytes per line, newline included
BLOCK_LINES = 100_000


LINE_TEMPLATE = "line %012d " + "x" * (LINE_WIDTH - len("line 000000000000 ") - 1) + "\n"


def line_text(number: int) -> str:
    return LINE_TEMPLATE % number


def ensure_file(size_mb: int) -> tuple[Path, int]:
    """A file of about size_mb MB with fixed-width numbered lines; reused when already there."""
    lines = size_mb * 1024 * 1024 // LINE_WIDTH
    path = DATA_DIR / f"read_offset_{size_mb}mb.txt"
    if path.exists() and path.stat().st_size == lines * LINE_WIDTH:
        return path, lines
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    partial = path.with_suffix(".part")
    with partial.open("w", encoding="ascii") as handle:
        for start in range(1, lines + 1, BLOCK_LINES):
            handle.write("".join(map(line_text, range(start, min(start + BLOCK_LINES, lines + 1)))))
    partial.replace(path)
    print(f"created {path} ({lines:,} lines) in {time.perf_counter() - started:.1f} s")
    return path, lines


async def goat_read(registry: Registry, path: Path, offset: int) -> list[str]:
    out = await registry.call("Read", {"file_path": str(path), "offset": offset, "limit": 3})
    if out.is_error:
        raise SystemExit(out.content)
    return [line.split("\t", 1)[1] for line in out.content.splitlines()[:3]]


def shell_read(path: Path, offset: int) -> list[str]:
    command = f"tail -n +{offset} '{path}' | head -n 3"
    result = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


def best_time(repeat: int, run: Callable[[], list[str]]) -> tuple[float, list[str]]:
    times: list[float] = []
    lines: list[str] = []
    for _ in range(repeat):
        started = time.perf_counter()
        lines = run()
        times.append(time.perf_counter() - started)
    return min(times), lines


def main() -> None:
    parser = argparse.ArgumentParser(description="Read 3 lines deep in a big file: goat vs tail | head.")
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the test file (default 1024)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side; the best is shown")
    args = parser.parse_args()
    path, lines = ensure_file(args.size_mb)
    offset = lines - 5
    registry = default_registry(cwd=path.parent)
    process = psutil.Process()

    shell_read(path, offset)  # warm the page cache so both sides read from memory
    rss_before = process.memory_info().rss
    ours, our_lines = best_time(args.repeat, lambda: asyncio.run(goat_read(registry, path, offset)))
    rss_growth = process.memory_info().rss - rss_before
    theirs, their_lines = best_time(args.repeat, lambda: shell_read(path, offset))
    if our_lines != their_lines or our_lines != [line_text(offset + i).rstrip("\n") for i in range(3)]:
        raise SystemExit(f"results differ: {our_lines!r} vs {their_lines!r}")

    tracemalloc.start()
    asyncio.run(goat_read(registry, path, offset))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    size_mb = path.stat().st_size / 2**20
    print(f"file: {size_mb:,.0f} MB, {lines:,} lines; reading 3 lines at offset {offset:,}")
    print(f"goat Read (registry.call):      {ours * 1000:8.1f} ms")
    print(f"tail -n +N | head -n 3:         {theirs * 1000:8.1f} ms")
    print(f"ratio goat / tail:              {ours / theirs:8.2f}x")
    print(f"peak traced Python allocations: {peak / 2**20:8.2f} MB (target < 40 MB)")
    print(f"RSS growth during our reads:    {rss_growth / 2**20:8.2f} MB (target < 40 MB)")


if __name__ == "__main__":
    main()
