"""A replayed 150-turn data-analysis session against a model with a 32k window (issue 11).

15 prompts of 10 model turns each: large Read outputs of a CSV, shell summaries, Grep results and
plot images, then an answer. The agent runs for real (tools, files, litellm over HTTP) against the
replay server, which refuses any request over 90 % of the window the way a provider would.

Side by side, the same script runs with an unlimited window (nothing pruned or compacted): the
baseline for the input tokens. Cost is priced with litellm's cost map for a named model, without
caching and with a prompt cache that reads the prefix the previous request already sent (what
automatic caching or Anthropic breakpoints on the newest turn give).
Run: python benchmarks/bench_long_session.py [--window N] [--model NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from goat_jupyter.agent.compaction import COMPACTION_MARKER
from goat_jupyter.agent.context import message_tokens, request_tokens
from goat_jupyter.agent.litellm_loader import _import_litellm  # pyright: ignore[reportPrivateUsage]
from goat_jupyter.agent.llm import LLMClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.runner import Executor

PROMPTS = 15
TURNS_PER_PROMPT = 10
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--window", type=int, default=32_768, help="context window of the model")
    parser.add_argument("--model", default="anthropic/claude-sonnet-4-5", help="model whose prices to use")
    return parser.parse_args()


def workspace(root: Path) -> None:
    rows = [
        f"{i},2024-{i % 12 + 1:02d}-{i % 28 + 1:02d},{(i * 7919) % 10007 / 13:.3f},region_{i % 17},{i % 5}"
        for i in range(20_000)
    ]
    (root / "sales.csv").write_text("id,date,revenue,region,channel\n" + "\n".join(rows) + "\n")
    for n in range(PROMPTS):
        (root / f"plot_{n}.png").write_bytes(PIXEL_PNG)


def call(name: str, arguments: dict[str, Any], step: int) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}], "match": f"[step {step}]"}


def prompt_turns(root: Path, step: int) -> list[dict[str, Any]]:
    csv = str(root / "sales.csv")
    base = 1 + step * 900
    turns = [
        call("Read", {"file_path": csv, "offset": base, "limit": 300}, step),
        call("Bash", {"command": f"sed -n '{base + 300},{base + 420}p' sales.csv | sort -t, -k3 -n"}, step),
        call("Read", {"file_path": str(root / f"plot_{step}.png")}, step),
        call(
            "Grep",
            {"pattern": f"region_{step}\\b", "path": csv, "output_mode": "content", "head_limit": 120},
            step,
        ),
        call("Read", {"file_path": csv, "offset": base + 450, "limit": 250}, step),
        call("Bash", {"command": f"awk -F, 'NR>{base} && NR<{base + 200} {{print $4, $3}}' sales.csv"}, step),
        call("Read", {"file_path": str(root / f"plot_{step}.png")}, step),
        call("Grep", {"pattern": "region_1[0-6]", "path": csv, "output_mode": "count"}, step),
        call("Read", {"file_path": csv, "offset": base + 700, "limit": 200}, step),
    ]
    answer = f"Step {step}: revenue by region computed; " + " ".join(f"finding{step}_{i}" for i in range(120))
    return [*turns, {"text": answer, "match": f"[step {step}]"}]


def script(root: Path) -> list[dict[str, Any]]:
    summaries = [
        {
            "text": f"## Goal\nAnalyse sales.csv by region.\n## Current state\nSummary {i}.",
            "match": COMPACTION_MARKER,
        }
        for i in range(40)
    ]
    return summaries + [turn for step in range(PROMPTS) for turn in prompt_turns(root, step)]


@dataclass
class Outcome:
    requests: list[dict[str, Any]]
    compactions: int
    seconds: float


async def run_session(root: Path, window: int, limit: int | None) -> Outcome:
    with ReplayServer(script(root), context_limit=limit) as server:
        session = Session(workspace=root, persist=False)
        session.settings = session.settings.model_copy(update={"context_window": window})
        registry = default_registry(session=session)
        llm = LLMClient(
            "openai/replay", retry=RetryPolicy(max_retries=0), extra={"api_base": server.url, "api_key": "k"}
        )
        agent = Agent(session, registry, Executor(registry, session), llm, lambda _event: None, max_turns=20)
        started = time.perf_counter()
        for step in range(PROMPTS):
            await agent.run(f"[step {step}] Look at the next part of the sales data and plot it.")
        seconds = time.perf_counter() - started
        requests = [r for r in server.requests if COMPACTION_MARKER not in str(r["messages"])]
        return Outcome(requests, session.context.compactions, seconds)


def sizes(requests: list[dict[str, Any]]) -> list[int]:
    return [request_tokens(r["messages"], r.get("tools", [])) for r in requests]


def cached_prefix(previous: dict[str, Any] | None, current: dict[str, Any]) -> int:
    """Tokens of the leading messages (and tools) this request shares with the one before it."""
    if previous is None or previous.get("tools") != current.get("tools"):
        return 0
    shared = request_tokens([], current.get("tools", []))
    for old, new in zip(previous["messages"], current["messages"], strict=False):
        if old != new:
            break
        shared += message_tokens(new)
    return shared


def costs(requests: list[dict[str, Any]], model: str) -> tuple[float, float, int]:
    """(cost without caching, cost with caching, cached tokens) of the requests' input."""
    litellm = _import_litellm()
    plain = cached_cost = 0.0
    cached_total = 0
    previous: dict[str, Any] | None = None
    for request, size in zip(requests, sizes(requests), strict=True):
        read = cached_prefix(previous, request)
        plain += litellm.cost_per_token(model=model, prompt_tokens=size, completion_tokens=0)[0]
        cached_cost += litellm.cost_per_token(
            model=model,
            prompt_tokens=size,
            completion_tokens=0,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=size - read,
        )[0]
        cached_total += read
        previous = request
    return plain, cached_cost, cached_total


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        workspace(root)
        ours = asyncio.run(run_session(root, args.window, int(args.window * 0.9)))
        baseline = asyncio.run(run_session(root, 100_000_000, None))
    ours_sizes, base_sizes = sizes(ours.requests), sizes(baseline.requests)
    plain, cached, cached_tokens = costs(ours.requests, args.model)
    base_plain, base_cached, _ = costs(baseline.requests, args.model)
    print(
        f"{len(ours.requests)} model turns in {PROMPTS} prompts, window {args.window:,} tokens (cl100k counts)"
    )
    print(
        f"  peak request: {max(ours_sizes):,} tokens = {max(ours_sizes) / args.window:.1%} of the window (limit 90 %)"
    )
    print(f"  compactions: {ours.compactions}")
    print(
        f"  total input tokens: {sum(ours_sizes):,} with pruning/compaction; {sum(base_sizes):,} without "
        f"(unlimited window, peak {max(base_sizes):,}): {sum(ours_sizes) / sum(base_sizes):.2f}x"
    )
    print(
        f"  input cost on {args.model}: ${plain:.3f} without caching, ${cached:.3f} with caching "
        f"({cached_tokens:,} cached tokens, {cached / plain:.2f}x)"
    )
    print(
        f"  without pruning (unlimited window): ${base_plain:.3f} without caching, ${base_cached:.3f} with caching"
    )
    print(f"  wall time: {ours.seconds:.1f} s (baseline run {baseline.seconds:.1f} s)")


if __name__ == "__main__":
    main()
