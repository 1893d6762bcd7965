"""Agent overhead per turn: one %%goat-style turn through Agent + litellm vs a raw streaming HTTP call.

All three talk to the same replay server and stream the same scripted answer:
- raw: an httpx streaming POST of the very request body the agent sent (system prompt, tool
  schemas) that reads every SSE line;
- litellm: `litellm.acompletion(stream=True)` with that same request, consumed to the end: the
  floor any litellm-based agent pays;
- agent: a whole turn through Agent, executor, session and litellm.
Measured after warm-up (litellm imported, connections open), interleaved so machine noise hits all
three alike. `--chunk-delay` adds a per-chunk delay on the server to model a provider's pace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from goat_jupyter.agent.litellm_loader import litellm_module
from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import make_agent

ANSWER = "The three weakest months were February, August and January; February and August nearly tie."


async def raw_turn(client: httpx.AsyncClient, url: str, body: dict[str, object]) -> None:
    async with client.stream("POST", f"{url}/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line == "data: [DONE]":
                break


async def litellm_turn(url: str, body: dict[str, Any]) -> None:
    litellm = await litellm_module()
    request = {key: value for key, value in body.items() if key != "model"}
    stream = await litellm.acompletion(
        model="openai/replay", api_base=url, api_key="bench", max_retries=0, **request
    )
    async for _chunk in stream:
        pass


async def timed(action: Awaitable[object], into: list[float]) -> None:
    start = time.perf_counter()
    await action
    into.append(time.perf_counter() - start)


async def measure(runs: int, chunk_delay: float) -> dict[str, list[float]]:
    turn = {"text": ANSWER, "chunk_delay_s": chunk_delay}
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    times: dict[str, list[float]] = {"agent": [], "litellm": [], "raw": []}
    with ReplayServer([turn] * (3 * runs + 6)) as server:
        rig = make_agent(workspace, server.url)
        rig.session.persist = False
        async with httpx.AsyncClient(timeout=30) as client:
            await rig.agent.run("warm up")
            # The baselines send exactly what the agent sent (system prompt, history, tool schemas).
            body = dict(server.requests[-1])
            await raw_turn(client, server.url, body)
            await litellm_turn(server.url, body)
            for index in range(runs):
                rig.session.reset()
                await timed(rig.agent.run(f"question {index}"), times["agent"])
                await timed(litellm_turn(server.url, body), times["litellm"])
                await timed(raw_turn(client, server.url, body), times["raw"])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed chunks")
    args = parser.parse_args()
    times = asyncio.run(measure(args.runs, args.chunk_delay))
    agent, litellm, raw = (statistics.median(times[name]) * 1000 for name in ("agent", "litellm", "raw"))
    print(json.dumps({"chunk_delay_s": args.chunk_delay, "runs": args.runs}))
    print(f"agent turn (Agent + executor + litellm):   median {agent:.1f} ms")
    print(f"bare litellm.acompletion, same request:    median {litellm:.1f} ms")
    print(f"raw streaming HTTP round trip (httpx):     median {raw:.1f} ms")
    print(f"agent / raw     {agent / raw:.2f}x  (+{agent - raw:.1f} ms per turn; target <= 1.1x)")
    print(f"agent / litellm {agent / litellm:.2f}x  (+{agent - litellm:.1f} ms: goat's own share)")
    print(f"litellm / raw   {litellm / raw:.2f}x  (+{litellm - raw:.1f} ms: litellm's own share)")


if __name__ == "__main__":
    main()
