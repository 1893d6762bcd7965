"""Per-call overhead of the executor: registry.call (lookup, JSON/pydantic validation, hooks and
permission points, events, bounding) vs awaiting the tool's run() directly with parsed input.

Two tools: a no-op tool and the real TodoRead. Both contenders run in interleaved rounds so load
drift hits them alike; the script prints the medians (microseconds), the ratio and the absolute
overhead per call. Target: overhead well under 100 us, invisible next to any LLM round trip.
Run: python benchmarks/bench_executor.py [--calls N] [--rounds R] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled

from goat_jupyter.tools import Registry, Tool, ToolContext, ToolInput, ToolOutput, default_registry

Call = Callable[[], Awaitable[object]]


class NoopInput(ToolInput):
    text: str = ""


class NoopTool(Tool[NoopInput]):
    """Does nothing: what is left is the executor's own cost."""

    name = "Noop"
    input_model = NoopInput
    side_effect = "read_only"

    def __init__(self) -> None:
        super().__init__()
        self._description = "Does nothing."

    async def run(self, args: NoopInput, ctx: ToolContext) -> ToolOutput | str:
        return args.text


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000, help="calls per contender per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="200 calls x 3 rounds")
    return parser.parse_args()


async def time_calls(call: Call, count: int) -> list[float]:
    """Microseconds per awaited call."""
    samples: list[float] = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await call()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


async def compare(label: str, via_executor: Call, direct: Call, calls: int, rounds: int) -> None:
    await time_calls(via_executor, 200)  # warm caches (schemas, pydantic validators)
    await time_calls(direct, 200)
    ours: list[float] = []
    baseline: list[float] = []
    for _ in range(rounds):
        ours += await time_calls(via_executor, calls)
        baseline += await time_calls(direct, calls)
    ours_median, base_median = statistics.median(ours), statistics.median(baseline)
    print(
        f"{label:<8} registry.call {ours_median:8.2f} us | tool.run direct {base_median:8.2f} us | "
        f"ratio {ours_median / base_median:6.1f}x | overhead {ours_median - base_median:7.2f} us/call"
    )


async def bench(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        registry: Registry = default_registry(cwd=Path(folder))
        noop = NoopTool()
        registry.register(noop)
        ctx = ToolContext(registry.session)
        noop_args = NoopInput(text="ok")
        todo_read = registry.get("TodoRead")
        assert todo_read is not None
        todo_args: Any = todo_read.input_model.model_validate({})
        await registry.call(
            "TodoWrite", {"todos": [{"content": "Load", "status": "in_progress", "activeForm": "Loading"}]}
        )
        print(f"{calls} calls x {rounds} rounds per contender; medians per call")
        await compare(
            "Noop",
            lambda: registry.call("Noop", {"text": "ok"}),
            lambda: noop.run(noop_args, ctx),
            calls,
            rounds,
        )
        await compare(
            "TodoRead",
            lambda: registry.call("TodoRead", {}),
            lambda: todo_read.run(todo_args, ctx),
            calls,
            rounds,
        )


def main() -> None:
    args = parse_args()
    calls, rounds = (200, 3) if args.quick else (args.calls, args.rounds)
    asyncio.run(bench(calls, rounds))


if __name__ == "__main__":
    main()
