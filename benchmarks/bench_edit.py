"""Edit with the tolerant cascade vs the exact-only path, on the same files, when the exact match
succeeds: the cascade must cost nothing measurable there (ratio ~1.0x).

Two levels, each run side by side in one process (best of --repeat, alternating):
- matching: `find_replacements` + `updated_text` vs `str.count` + `str.replace` (the code before the cascade);
- the whole Edit tool call (lock, read, hash check, atomic write) with either matcher plugged in.

    python benchmarks/bench_edit.py
    python benchmarks/bench_edit.py --repeat 30
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled
import goat_jupyter.tools.files.edit as edit_module
from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.files.edit_match import Replacement

SIZES = {"2 KB": 60, "200 KB": 6_000, "2 MB": 60_000}  # lines of ~34 characters

Matcher = Callable[[str, str, str, bool, Path], tuple[list[Replacement], str]]
CASCADE: Matcher = edit_module.find_replacements


def exact_only(text: str, old: str, new: str, replace_all: bool, path: Path) -> tuple[list[Replacement], str]:
    """The matcher as it was before the cascade: one exact occurrence, else an error."""
    count = text.count(old)
    if count != 1 and not replace_all:
        raise SystemExit(f"benchmark input must match exactly once ({count})")
    start = text.find(old)
    return [Replacement(start, start + len(old), new)], "exact"


def source(lines: int) -> str:
    return "".join(f"    value_{i:06d} = compute({i}, {i % 7})\n" for i in range(lines))


def target_line(lines: int) -> tuple[str, str]:
    middle = lines // 2
    return f"value_{middle:06d} = compute({middle}, {middle % 7})", f"value_{middle:06d} = compute(0, 0)"


def best(repeat: int, run: Callable[[], object]) -> float:
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def bench_matching(lines: int, repeat: int) -> tuple[float, float]:
    text = source(lines)
    old, new = target_line(lines)
    path = Path("/bench.py")

    def cascade() -> str:
        replacements, strategy = CASCADE(text, old, new, False, path)
        return edit_module.updated_text(text, old, replacements, strategy)

    def exact() -> str:
        return text.replace(old, new) if text.count(old) == 1 else text

    assert cascade() == exact()
    times = {"cascade": 1e9, "exact": 1e9}
    for _ in range(3):  # alternate, so both see the same machine load
        times["cascade"] = min(times["cascade"], best(repeat, cascade))
        times["exact"] = min(times["exact"], best(repeat, exact))
    return times["cascade"], times["exact"]


async def edit_pair(registry: Registry, path: Path, old: str, new: str) -> None:
    for before, after in ((old, new), (new, old)):
        out = await registry.call("Edit", {"file_path": str(path), "old_string": before, "new_string": after})
        if out.is_error:
            raise SystemExit(out.content)


def bench_tool(lines: int, repeat: int, folder: Path) -> tuple[float, float]:
    path = folder / f"bench_{lines}.py"
    path.write_text(source(lines))
    registry = default_registry(cwd=folder)
    old, new = target_line(lines)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(registry.call("Read", {"file_path": str(path)}))
    times = {"cascade": 1e9, "exact": 1e9}
    try:
        for _ in range(3):
            for name, matcher in (("cascade", CASCADE), ("exact", exact_only)):
                edit_module.find_replacements = matcher
                took = best(repeat, lambda: loop.run_until_complete(edit_pair(registry, path, old, new)))
                times[name] = min(times[name], took)
    finally:
        edit_module.find_replacements = CASCADE
        loop.close()
    return times["cascade"], times["exact"]


def main() -> None:
    parser = argparse.ArgumentParser(description="Edit: tolerant cascade vs exact-only on exact matches.")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"{'file':>8} {'level':>9} {'cascade':>11} {'exact-only':>11} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for label, lines in SIZES.items():
            for level, (cascade, exact) in (
                ("matching", bench_matching(lines, args.repeat)),
                ("Edit call", bench_tool(lines, max(3, args.repeat // 3), Path(folder))),
            ):
                print(
                    f"{label:>8} {level:>9} {cascade * 1e3:>9.3f}ms {exact * 1e3:>9.3f}ms {cascade / exact:>6.2f}x"
                )


if __name__ == "__main__":
    main()
