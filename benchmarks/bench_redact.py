"""What redacting known keys costs a tool call: a call through the executor with scrubbing (six keys
known: five in the environment, one in the key store) vs the same call with scrubbing switched off,
for a small (100 B) and a 1 MB output, with and without a key inside it; the tools are a no-op (the
worst case: nothing but overhead) and a real Bash `cat`. Also the cost per streamed text delta.

Contenders run in interleaved rounds; the script prints medians, the ratio and the absolute cost.
Target: invisible next to a tool call (a Bash call is milliseconds).
Run: python benchmarks/bench_redact.py [--calls N] [--rounds R] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled

import goat_jupyter.tools.runner as runner
from goat_jupyter.state import SessionState
from goat_jupyter.tools import Registry, Tool, ToolContext, ToolInput, ToolOutput, default_registry
from goat_jupyter.tools.events import Event, TextDelta
from goat_jupyter.tools.redaction import CleanSink
from goat_jupyter.tools.runner import Executor, ToolCall

KEYS = {f"BENCH{i}_API_KEY": f"sk-bench-{i}-" + "x7Qm" * 10 for i in range(5)}
STORED = {"BENCH_STORED_TOKEN": "gsk_bench_stored_" + "Zy8X" * 8}
Call = Callable[[], Awaitable[object]]


class EchoInput(ToolInput):
    size: str = "small"


class EchoTool(Tool[EchoInput]):
    """Returns a prepared text: what is left is the executor's own cost."""

    name = "Echo"
    input_model = EchoInput
    side_effect = "read_only"
    max_output_chars = 2_000_000
    texts: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        super().__init__()
        self._description = "Returns a prepared text."

    async def run(self, args: EchoInput, ctx: ToolContext) -> ToolOutput | str:
        return self.texts[args.size]


class PassThrough:
    """Scrubbing switched off: events go to the sink untouched."""

    def __init__(self, sink: Callable[[Event], None]) -> None:
        self.sink = sink

    def __call__(self, event: Event) -> None:
        self.sink(event)


def texts() -> dict[str, str]:
    line = "2026-01-01 12:00:00 INFO worker-3 processed batch 1234 in 56 ms (ok)\n"
    big = line * (1_000_000 // len(line))
    key = next(iter(KEYS.values()))
    return {"small": line[:100], "1MB": big, "1MB+key": big[:500_000] + key + big[500_000:]}


def executor(workspace: Path, *, scrub: bool) -> Executor:
    session = SessionState(workspace=workspace)
    registry: Registry = default_registry(session=session)
    registry.register(EchoTool())
    runner.CleanSink = CleanSink if scrub else PassThrough  # pyright: ignore[reportAttributeAccessIssue]
    return Executor(registry, session, emit=lambda event: None)


_clean_output = runner.clean_output


async def time_calls(run: Executor, call: ToolCall, count: int, *, scrub: bool) -> list[float]:
    runner.clean_output = _clean_output if scrub else (lambda output: output)  # pyright: ignore[reportAttributeAccessIssue]
    samples: list[float] = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await run.run_one(call)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


async def compare(label: str, call: ToolCall, workspace: Path, calls: int, rounds: int) -> None:
    on, off = executor(workspace, scrub=True), executor(workspace, scrub=False)
    await time_calls(on, call, 3, scrub=True)
    await time_calls(off, call, 3, scrub=False)
    with_scrub: list[float] = []
    without: list[float] = []
    for number in range(rounds):  # alternate who goes first: order alone moved Bash by 10 %
        if number % 2:
            without += await time_calls(off, call, calls, scrub=False)
        with_scrub += await time_calls(on, call, calls, scrub=True)
        if not number % 2:
            without += await time_calls(off, call, calls, scrub=False)
    a, b = statistics.median(with_scrub), statistics.median(without)
    print(
        f"{label:<22} scrubbed {a:9.1f} us | not scrubbed {b:9.1f} us | ratio {a / b:5.2f}x | cost {a - b:7.1f} us"
    )


def text_delta_cost(count: int) -> None:
    """Per streamed piece of model text: CleanSink vs handing the event on untouched."""
    pieces = ["The result ", "of the query ", "is 42 rows; ", "see the table below.\n"] * (count // 4)
    timings: dict[str, float] = {}
    for label, wrap in (("scrubbed", CleanSink), ("not scrubbed", PassThrough)):
        events: list[Event] = []
        sink = wrap(events.append)
        start = time.perf_counter_ns()
        for piece in pieces:
            sink(TextDelta(piece))
        timings[label] = (time.perf_counter_ns() - start) / 1000 / len(pieces)
    a, b = timings["scrubbed"], timings["not scrubbed"]
    print(
        f"{'text delta, per piece':<22} scrubbed {a:9.1f} us | not scrubbed {b:9.1f} us | cost {a - b:7.1f} us"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="20 calls x 3 rounds")
    args = parser.parse_args()
    calls, rounds = (20, 3) if args.quick else (args.calls, args.rounds)
    EchoTool.texts = texts()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        os.environ["GOAT_HOME"] = str(workspace / "goat-home")
        (workspace / "goat-home").mkdir()
        (workspace / "goat-home" / "keys.json").write_text(json.dumps(STORED))
        os.environ.update(KEYS)
        (workspace / "big.log").write_text(EchoTool.texts["1MB"])
        cases: list[tuple[str, str, dict[str, Any]]] = [
            ("no-op tool, 100 B", "Echo", {"size": "small"}),
            ("no-op tool, 1 MB", "Echo", {"size": "1MB"}),
            ("no-op tool, 1 MB + key", "Echo", {"size": "1MB+key"}),
            ("Bash echo, 100 B", "Bash", {"command": "echo " + "x" * 95}),
            ("Bash cat, 1 MB", "Bash", {"command": "cat big.log"}),
        ]
        for label, name, arguments in cases:
            bash = name == "Bash"
            await compare(
                label,
                ToolCall("c", name, arguments),
                workspace,
                max(3, calls // 10) if bash else calls,
                rounds,
            )
        text_delta_cost(4000)


if __name__ == "__main__":
    asyncio.run(main())
