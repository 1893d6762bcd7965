"""Agent overhead per turn: one %%goat-style turn through Agent + litellm vs a raw streaming HTTP call.

Both talk to the same replay server and stream the same scripted answer; the raw baseline is an
httpx streaming POST of the very request body the agent sent (system prompt, tool schemas) that
reads every SSE line. Measured after warm-up (litellm imported, connections
open). `--chunk-delay` adds a per-chunk delay on the server to model a real provider's streaming pace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import make_agent

ANSWER = "The three weakest months were February, August and January; February and August nearly tie."


async def raw_turn(client: httpx.AsyncClient, url: str, body: dict[str, object]) -> None:
    async with client.stream("POST", f"{url}/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line == "data: [DONE]":
                break


async def measure(runs: int, chunk_delay: float) -> tuple[list[float], list[float]]:
    turn = {"text": ANSWER, "chunk_delay_s": chunk_delay}
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    ours: list[float] = []
    raw: list[float] = []
    with ReplayServer([turn] * (2 * runs + 4)) as server:
        rig = make_agent(workspace, server.url)
        rig.session.persist = False
        async with httpx.AsyncClient(timeout=30) as client:
            await rig.agent.run("warm up")
            # The baseline sends exactly what the agent sent (system prompt, history, tool schemas).
            body = dict(server.requests[-1])
            await raw_turn(client, server.url, body)
            for index in range(runs):  # interleaved so machine noise hits both alike
                rig.session.reset()
                start = time.perf_counter()
                await rig.agent.run(f"question {index}")
                ours.append(time.perf_counter() - start)
                start = time.perf_counter()
                await raw_turn(client, server.url, body)
                raw.append(time.perf_counter() - start)
    return ours, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed chunks")
    args = parser.parse_args()
    ours, raw = asyncio.run(measure(args.runs, args.chunk_delay))
    ours_ms, raw_ms = statistics.median(ours) * 1000, statistics.median(raw) * 1000
    print(json.dumps({"chunk_delay_s": args.chunk_delay, "runs": args.runs}))
    print(f"agent turn (Agent + executor + litellm): median {ours_ms:.1f} ms")
    print(f"raw streaming HTTP round trip (httpx):   median {raw_ms:.1f} ms")
    print(f"ratio {ours_ms / raw_ms:.2f}x, overhead {ours_ms - raw_ms:.1f} ms per turn (target <= 1.1x)")


if __name__ == "__main__":
    main()
