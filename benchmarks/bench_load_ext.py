"""`%load_ext goat_jupyter` time vs `import ipywidgets`, each in fresh IPython processes (target <= 1.5x)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

IPYTHON_BOOT = (
    "from IPython.core.interactiveshell import InteractiveShell; ip = InteractiveShell.instance()\n"
)
TIMED = "import time; t = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - t)\n"


def time_in_fresh_process(stmt: str) -> float:
    code = IPYTHON_BOOT + TIMED.format(stmt=stmt)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    ours: list[float] = []
    baseline: list[float] = []
    for _ in range(args.runs):  # interleaved so machine noise hits both alike
        ours.append(time_in_fresh_process("ip.run_line_magic('load_ext', 'goat_jupyter')"))
        baseline.append(time_in_fresh_process("import ipywidgets"))
    ours_ms = statistics.median(ours) * 1000
    base_ms = statistics.median(baseline) * 1000
    print(f"%load_ext goat_jupyter: median {ours_ms:.0f} ms over {args.runs} runs")
    print(f"import ipywidgets:      median {base_ms:.0f} ms over {args.runs} runs")
    print(f"ratio: {ours_ms / base_ms:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
