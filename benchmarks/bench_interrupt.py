"""Stop button during `%%goat` running `Bash sleep 60`, and during RunCell of a blocking
`while True: time.sleep(0.1)` cell: interrupt to cell end, vs a plain async cell.

Baseline: the same kernel interrupting `await asyncio.sleep(60)` (ipykernel's own cancellation path).
Target: goat's cell ends in well under a second (the blocking RunCell case: <= 2 s).
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

from goat_jupyter.replay import ReplayServer
from tests.kernel_harness import KernelSession
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

BLOCKING = "import time\nopen('started.txt', 'w').write('1')\nwhile True:\n    time.sleep(0.1)"


async def interrupt_after_start(kernel: KernelSession, code: str, started: Path | None) -> float:
    cell = asyncio.ensure_future(kernel.execute(code, timeout=120))
    if started is None:
        await asyncio.sleep(1.0)
    else:
        while not (started.exists() and started.read_text().strip()):
            await asyncio.sleep(0.01)
        started.unlink()
    begin = time.perf_counter()
    await kernel.interrupt()
    await cell
    return time.perf_counter() - begin


async def measure(runs: int) -> tuple[list[float], list[float], list[float]]:
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-"))
    (workspace / ".goat").mkdir()
    (workspace / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01}))
    turns = [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo $$ > pid.txt; exec sleep 60"}}]}
        for _ in range(runs)
    ]
    turns += [
        {"tool_calls": [{"name": "RunCell", "arguments": {"cell_id": "cell-0"}}], "match": "[block]"}
        for _ in range(runs)
    ]
    blocking: list[float] = []
    ours: list[float] = []
    base: list[float] = []
    with ReplayServer(turns) as server:
        env = {
            "OPENAI_API_BASE": server.url,
            "OPENAI_API_KEY": "x",
            "GOAT_MODEL": "openai/replay",
            "GOAT_PERMISSION_MODE": "bypassPermissions",
            "GOAT_HOME": str(workspace / "home"),
        }
        async with KernelSession(workspace, env) as kernel:
            await kernel.execute("%load_ext goat_jupyter\nimport asyncio")
            for _ in range(runs):
                ours.append(await interrupt_after_start(kernel, "%%goat\nsleep", workspace / "pid.txt"))
                base.append(await interrupt_after_start(kernel, "await asyncio.sleep(60)", None))
            cells = [new_cell("code", BLOCKING)]
            FakeNotebookFrontend("nb.ipynb", cells, server_root=str(workspace)).attach(kernel)
            for _ in range(runs):
                code = "%%goat\n[block] run it"
                blocking.append(await interrupt_after_start(kernel, code, workspace / "started.txt"))
    return ours, base, blocking


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ours, base, blocking = asyncio.run(measure(args.runs))
    ours_ms = statistics.median(ours) * 1000
    base_ms = statistics.median(base) * 1000
    block_ms = statistics.median(blocking) * 1000
    print(f"%%goat Bash sleep 60, interrupt -> cell end: median {ours_ms:.0f} ms ({args.runs} runs)")
    print(
        f"%%goat RunCell of a time.sleep loop:        median {block_ms:.0f} ms, max {max(blocking) * 1000:.0f} ms"
    )
    print(f"plain `await asyncio.sleep(60)` cell:       median {base_ms:.0f} ms")
    print(
        f"ratio {ours_ms / base_ms:.2f}x (Bash), {block_ms / base_ms:.2f}x (RunCell); target: Bash < 1000 ms, RunCell <= 2000 ms"
    )


if __name__ == "__main__":
    main()
