"""Notebook bridge round trip, kernel side: `list_cells` over the goat.notebook comm vs an execute of `1`.

A real kernel over ZMQ (jupyter_client); the fake frontend from tests/ answers the comm the way
the labextension does. Ours: median time inside the kernel for one `list_cells` request (comm_msg
out on iopub, the reply back on shell). Baseline: median client-side round trip of executing `1`.
In a browser add the page's own 20-50 ms; the Galata test measures that one.
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

from tests.kernel_harness import KernelSession
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

IN_KERNEL = """
import json, time
from goat_jupyter.live.comm_bridge import CommBridge
_bridge = CommBridge()
assert await _bridge.connect() is not None, _bridge.absent_reason
_times = []
for _ in range({n}):
    _start = time.perf_counter()
    _reply = await _bridge.request("list_cells")
    _times.append(time.perf_counter() - _start)
_bridge.close()
assert len(_reply["cells"]) == {cells}
print(json.dumps(_times))
"""


async def measure(requests: int, cells: int) -> tuple[list[float], list[float]]:
    workspace = Path(tempfile.mkdtemp(prefix="goat-bench-bridge-"))
    async with KernelSession(workspace) as kernel:
        notebook = [new_cell("code", f"x{i} = {i}\nprint(x{i})") for i in range(cells)]
        FakeNotebookFrontend("nb.ipynb", notebook, server_root=str(workspace)).attach(kernel)
        await kernel.execute("import goat_jupyter.live.comm_bridge")  # imports out of the timing
        result = await kernel.execute(IN_KERNEL.format(n=requests, cells=cells), timeout=120)
        if result.status != "ok":
            raise RuntimeError(f"bridge cell failed: {result.error}")
        ours = [float(t) for t in json.loads(result.stdout)]
        baseline: list[float] = []
        for _ in range(requests):
            started = time.perf_counter()
            await kernel.execute("1")
            baseline.append(time.perf_counter() - started)
    return ours, baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--cells", type=int, default=20, help="cells in the fake notebook")
    parser.add_argument("--quick", action="store_true", help="30 requests")
    args = parser.parse_args()
    requests = 30 if args.quick else args.requests
    ours, baseline = asyncio.run(measure(requests, args.cells))
    ours_ms = statistics.median(ours) * 1000
    base_ms = statistics.median(baseline) * 1000
    print(
        f"bridge list_cells ({args.cells} cells), kernel side: median {ours_ms:.2f} ms over {requests} requests"
    )
    print(f"kernel execute of `1`, client side:        median {base_ms:.2f} ms over {requests} runs")
    print(f"ratio: {ours_ms / base_ms:.2f}x")


if __name__ == "__main__":
    main()
