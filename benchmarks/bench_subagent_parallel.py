"""A subagent calling four read-only tools in one turn vs the same subagent calling one of them.

A parent agent starts an Explore subagent through the Agent tool; parent and child talk to the
replay server over real HTTP, and the tools are real: Grep (ripgrep) for four literal patterns
over one installed package. Three contenders, interleaved in rounds (medians reported):
  one       the subagent's turn calls one Grep
  parallel  the subagent's turn calls four Greps at once (the executor runs read-only calls together)
  serial    baseline for reference: the same four Greps one per turn, as with no concurrency
Two figures each: the subagent's whole run (its duration_ms, two or more model round trips
included) and the time its tool calls were running (model turns left out).
Target (issue 6): parallel / one well under 4. Grep is CPU-bound, so the floor is about
4 / cores on an idle machine; the script prints the core count and the load average.
Run: python benchmarks/bench_subagent_parallel.py [--rounds N] [--package NAME] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from goat_jupyter.subagents import attach_subagents
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.events import Event, ToolFinished, ToolStarted
from goat_jupyter.tools.runner import Executor

PATTERNS = ("def __init__", "import os", "return None", "raise ValueError")
Call = dict[str, Any]
_ids = itertools.count(1)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (after one warm-up)")
    parser.add_argument("--package", default="numpy", help="the installed package Grep searches")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    return parser.parse_args()


def package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name!r} is not installed; pick another with --package")
    return next(iter(spec.submodule_search_locations))


def grep(root: str, index: int) -> Call:
    return {"name": "Grep", "arguments": {"pattern": PATTERNS[index], "path": root, "output_mode": "count"}}


def script(child_turns: list[list[Call]], marker: str) -> list[dict[str, Any]]:
    """Parent: one Agent call, then a final text; child: the given tool turns, then its answer."""
    agent_args = {"description": "bench", "prompt": f"{marker}: look", "subagent_type": "Explore"}
    parent = [
        {"match": "BENCH-PARENT", "tool_calls": [{"name": "Agent", "arguments": agent_args}]},
        {"match": "BENCH-PARENT", "text": "done"},
    ]
    child = [{"match": marker, "tool_calls": calls} for calls in child_turns]
    return [*parent, *child, {"match": marker, "text": "Found what was asked."}]


def tools_busy_ms(stamped: list[tuple[float, Event]]) -> float:
    """Time during which at least one of the subagent's tool calls was running (model turns excluded)."""
    starts = {e.call_id: t for t, e in stamped if isinstance(e, ToolStarted) and e.agent_id is not None}
    spans = sorted(
        (starts[e.call_id], t) for t, e in stamped if isinstance(e, ToolFinished) and e.agent_id is not None
    )
    busy, reached = 0.0, float("-inf")
    for begin, end in spans:
        busy += max(0.0, end - max(begin, reached))
        reached = max(reached, end)
    return busy * 1000


async def run_once(child_turns: list[list[Call]], workspace: Path) -> tuple[float, float]:
    """Run the parent once; return (subagent duration, its tools' wall time) in ms."""
    marker = f"BENCH-CHILD-{next(_ids)}"
    stamped: list[tuple[float, Event]] = []

    def emit(event: Event) -> None:
        stamped.append((time.perf_counter(), event))

    with ReplayServer(script(child_turns, marker)) as server:

        def llm_for(settings: Settings) -> LLMClient:
            retry = RetryPolicy(max_retries=0)
            return LLMClient(settings.model, retry=retry, extra={"api_base": server.url, "api_key": "bench"})

        session = Session(workspace=workspace, settings=Settings(model="openai/replay"), persist=False)
        registry = default_registry(session=session)
        executor = Executor(registry, session, services=attach_subagents(Services(), llm_for), emit=emit)
        await Agent(session, registry, executor, llm_for(session.settings), emit).run("BENCH-PARENT go")
    finished = [e for _, e in stamped if isinstance(e, ToolFinished)]
    failed = [e.output.content for e in finished if e.output.is_error]
    if failed:
        raise SystemExit(f"a tool call failed: {failed[0][:300]}")
    agent = next(e for e in finished if e.name == "Agent")
    return float(agent.output.metadata["duration_ms"]), tools_busy_ms(stamped)


async def measure(root: str, rounds: int, workspace: Path) -> dict[str, tuple[float, float]]:
    four = [grep(root, i) for i in range(4)]
    cases = {"one": [four[:1]], "parallel": [four], "serial": [[c] for c in four]}
    samples: dict[str, list[tuple[float, float]]] = {case: [] for case in cases}
    for number in range(rounds + 1):
        for case, turns in cases.items():
            result = await run_once(turns, workspace)
            if number:  # round 0 warms up (litellm import, page cache, connections)
                samples[case].append(result)
    return {
        case: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
        for case, runs in samples.items()
    }


def report(medians: dict[str, tuple[float, float]]) -> None:
    one = medians["one"]
    print(f"{'':22}{'subagent run':>14}{'ratio':>8}{'tools only':>14}{'ratio':>8}")
    labels = {"one": "one Grep", "parallel": "four Greps, parallel", "serial": "four Greps, serial"}
    for case, label in labels.items():
        run, tools = medians[case]
        print(f"{label:22}{run:11.0f} ms{run / one[0]:7.2f}x{tools:11.0f} ms{tools / one[1]:7.2f}x")
    ratio = medians["parallel"][0] / one[0]
    cores = os.cpu_count() or 1
    floor = max(1.0, 4 / cores)
    print(
        f"parallel / one (subagent run): {ratio:.2f}x; target: well under 4x; "
        f"floor for CPU-bound Grep here: 4 calls / {cores} cores = {floor:.2f}x"
    )
    print(f"serial / parallel (subagent run): {medians['serial'][0] / medians['parallel'][0]:.2f}x")


async def main() -> None:
    args = parse_args()
    rounds = 3 if args.quick else args.rounds
    root = package_dir(args.package)
    print(
        f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}  rounds: {rounds}  Grep over {root}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        report(await measure(root, rounds, Path(tmp)))


if __name__ == "__main__":
    asyncio.run(main())
