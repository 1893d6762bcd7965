"""First-token latency of the first `%%goat` after `%load_ext`, vs a later (warm) `%%goat` cell.

`%load_ext` starts importing litellm in a background thread and streams one request with a tool to
a throwaway local server, so the first real turn imports nothing more. A user takes a few seconds
to type the first prompt (`--typing`, a list); once the warm-up has finished, the first cell's first
token comes about as fast as a warm cell's. `--typing 0` shows the cost when the prompt is sent at
once ("Run All"). The warm-up's own duration is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
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


def kernel_env(workspace: Path, server: ReplayServer) -> dict[str, str]:
    (workspace / ".goat").mkdir()
    (workspace / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01}))
    return {"OPENAI_API_BASE": server.url, "OPENAI_API_KEY": "x", "GOAT_MODEL": "openai/replay",
            "GOAT_HOME": str(workspace / "home")}  # fmt: skip


async def one_kernel(typing_s: float) -> tuple[float, float]:
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    turns = [{"text": f"{FIRST_WORD}! How can I help?"}] * 2
    with ReplayServer(turns) as server:
        async with KernelSession(workspace, kernel_env(workspace, server)) as kernel:
            await kernel.execute("%load_ext goat_jupyter")
            await asyncio.sleep(typing_s)
            first = await time_to_first_text(kernel)
            warm = await time_to_first_text(kernel)
    return first, warm


def bare_litellm_import() -> float:
    """Seconds `import litellm` takes in a fresh interpreter: what the warm-up has to hide."""
    code = "import time; t = time.perf_counter(); import litellm; print(time.perf_counter() - t)"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(run.stdout.strip().splitlines()[-1])


async def warm_up_duration() -> float:
    """Seconds from `%load_ext` to the end of the background warm-up, measured in the kernel."""
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    with ReplayServer([]) as server:
        async with KernelSession(workspace, kernel_env(workspace, server)) as kernel:
            cell = (
                "import time\n_start = time.perf_counter()\n%load_ext goat_jupyter\n"
                "import goat_jupyter.agent.litellm_loader\ngoat_jupyter.agent.litellm_loader.warmed.wait()\n"
                "print(time.perf_counter() - _start)"
            )
            return float((await kernel.execute(cell)).stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--typing", default="0,3,10", help="seconds between %%load_ext and the first prompt (a list)"
    )
    args = parser.parse_args()
    bare = statistics.median(bare_litellm_import() for _ in range(args.runs))
    print(f"bare `import litellm` in a fresh interpreter: {bare:.1f} s")
    warm_up = statistics.median(asyncio.run(warm_up_duration()) for _ in range(args.runs))
    print(f"background warm-up finished {warm_up:.1f} s after %load_ext (median of {args.runs} kernels)")
    for typing_s in (float(value) for value in args.typing.split(",")):
        results = [asyncio.run(one_kernel(typing_s)) for _ in range(args.runs)]
        first = statistics.median(r[0] for r in results) * 1000
        warm = statistics.median(r[1] for r in results) * 1000
        print(
            f"typing {typing_s:4.1f} s: first %%goat first token {first:6.0f} ms, "
            f"warm cell {warm:4.0f} ms, ratio {first / warm:.2f}x"
        )


if __name__ == "__main__":
    main()
