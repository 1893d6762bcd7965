"""First-token latency of the first `%%goat` after `%load_ext`, vs a later (warm) `%%goat` cell.

`%load_ext` starts importing litellm in a background thread; a user takes a few seconds to type the
first prompt (`--typing`). If the pre-warm works, the first cell's first token comes about as fast
as a warm cell's. `--typing 0` shows the cost when the prompt is sent at once.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goat_jupyter.replay import ReplayServer
from tests.kernel_harness import KernelSession

FIRST_WORD = "Bonjour"


async def time_to_first_text(kernel: KernelSession) -> float:
    seen: list[float] = []
    start = time.perf_counter()

    def on_message(msg: dict[str, Any]) -> None:
        data = msg["content"].get("data", {})
        if not seen and FIRST_WORD in data.get("text/markdown", "") + data.get("text/plain", ""):
            seen.append(time.perf_counter() - start)

    await kernel.execute("%%goat\nsay hello", on_message=on_message)
    return seen[0]


async def one_kernel(typing_s: float) -> tuple[float, float]:
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    (workspace / ".goat").mkdir()
    (workspace / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01}))
    turns = [{"text": f"{FIRST_WORD}! How can I help?"}] * 2
    with ReplayServer(turns) as server:
        env = {"OPENAI_API_BASE": server.url, "OPENAI_API_KEY": "x", "GOAT_MODEL": "openai/replay",
               "GOAT_HOME": str(workspace / "home")}  # fmt: skip
        async with KernelSession(workspace, env) as kernel:
            await kernel.execute("%load_ext goat_jupyter")
            await asyncio.sleep(typing_s)
            first = await time_to_first_text(kernel)
            warm = await time_to_first_text(kernel)
    return first, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--typing", type=float, default=3.0, help="seconds between %%load_ext and the first prompt"
    )
    args = parser.parse_args()
    results = [asyncio.run(one_kernel(args.typing)) for _ in range(args.runs)]
    first = statistics.median(r[0] for r in results) * 1000
    warm = statistics.median(r[1] for r in results) * 1000
    print(f"first %%goat after %load_ext (+{args.typing:.0f} s typing): first token median {first:.0f} ms")
    print(f"warm %%goat cell:                                first token median {warm:.0f} ms")
    print(f"ratio {first / warm:.2f}x ({args.runs} kernels)")


if __name__ == "__main__":
    main()
