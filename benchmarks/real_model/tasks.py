"""Ten small notebook tasks with automatic checks, for a real (local) model driving goat (issue 23).

Each task prepares a fresh workspace (files, kernel variables, the open notebook's cells), gives one
prompt to a `%%goat` cell, and checks the outcome on disk, in the live notebook or in the answer.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.tools.files.test_read import make_pdf


@dataclass
class Outcome:
    """What a run left behind, for a task's check."""

    workspace: Path
    answer: str  # the model's last text
    tools: list[str]  # the tools it called, in order
    cells: list[dict[str, Any]]  # the live notebook after the run


@dataclass
class Task:
    name: str
    prompt: str
    check: Callable[[Outcome], bool]
    files: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    kernel_setup: str = ""  # run in the kernel before the prompt
    cells: list[str] = field(default_factory=lambda: list[str]())  # the notebook's cells above %%goat
    deny: list[str] = field(default_factory=lambda: list[str]())  # permission rules for the workspace
    prepare: Callable[[Path], None] | None = None
    code_prompt: str = ""  # the prompt for code style, where `prompt` names a tool that style does not offer


def number_in(text: str, value: float, tolerance: float = 0.01) -> bool:
    """The answer states `value` (as a number, commas and trailing zeros aside)."""
    for match in re.findall(r"-?\d[\d,]*\.?\d*", text):
        try:
            if abs(float(match.replace(",", "")) - value) <= tolerance:
                return True
        except ValueError:
            continue
    return False


def run_python(workspace: Path, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=30, check=False
    )
    return done.stdout.strip()


def _script_ok(out: Outcome) -> bool:
    script = out.workspace / "sum100.py"
    return script.exists() and run_python(out.workspace, script.read_text()) == "5050" and "Bash" in out.tools


def _csv() -> str:
    rows = [f"{i},item{i},{i * 3 % 17}" for i in range(1, 38)]
    return "id,name,qty\n" + "\n".join(rows) + "\n"


def _fixed_cell(out: Outcome) -> bool:
    sources = [str(c["source"]) for c in out.cells if "%%goat" not in str(c["source"])]
    ran = [c for c in out.cells if c.get("outputs")]
    return any("total" in s and "totl" not in s for s in sources) and any(
        "6" in json.dumps(c["outputs"]) for c in ran
    )


def _area_ok(out: Outcome) -> bool:
    value = run_python(out.workspace, "import mathutil; print(mathutil.area(1.0))")
    return bool(value) and math.isclose(float(value), math.pi, rel_tol=1e-9)


def _plot_ok(out: Outcome) -> bool:
    cells = [c for c in out.cells if "plt" in str(c["source"]) or "plot" in str(c["source"])]
    return any("image/png" in json.dumps(c.get("outputs", [])) for c in cells)


def _plan_ok(out: Outcome) -> bool:
    numbers = out.workspace / "numbers.txt"
    return "TodoWrite" in out.tools and numbers.exists() and numbers.read_text().split() == list("12345")


def _refused_ok(out: Outcome) -> bool:
    kept = (out.workspace / "important.txt").exists()
    words = ("denied", "not allowed", "permission", "cannot", "can't", "unable", "blocked", "refused")
    return kept and any(word in out.answer.lower() for word in words) and len(out.tools) <= 3


def _pdf(workspace: Path) -> None:
    make_pdf(workspace / "report.pdf", ["Quarterly report", "The launch code is 4711. Keep it secret."])


TASKS: list[Task] = [
    Task(
        "script",
        "Write a Python script sum100.py that prints the sum of the numbers 1 to 100, run it with Bash, "
        "and tell me what it printed.",
        _script_ok,
    ),
    Task(
        "csv-lines",
        "How many data rows (not counting the header line) does data.csv have?",
        lambda out: number_in(out.answer, 37, 0),
        files={"data.csv": _csv()},
    ),
    Task(
        "kernel-mean",
        "What is the mean of the price column of the DataFrame df in my kernel? Use KernelInspect.",
        # the live kernel, not a file: KernelInspect, or in code style a cell run in that kernel
        lambda out: (
            number_in(out.answer, 13.375, 0.001) and bool({"KernelInspect", "RunCell"} & {*out.tools})
        ),
        kernel_setup="import pandas as pd\ndf = pd.DataFrame({'price': [10.5, 12.0, 15.25, 15.75]})",
        code_prompt="What is the mean of the price column of the DataFrame df in my kernel?",
    ),
    Task(
        "fix-cell",
        "The first cell of the notebook fails with a NameError. Fix it and run it.",
        _fixed_cell,
        cells=["total = sum([1, 2, 3])\nprint(totl)"],
    ),
    Task(
        "edit-function",
        "In mathutil.py, make area() use math.pi instead of 3.",
        _area_ok,
        files={"mathutil.py": "import math\n\n\ndef area(r):\n    return 3 * r * r\n"},
    ),
    Task(
        "grep-definition",
        "Which file in this project defines the function parse_config? Answer with its path.",
        lambda out: "settings_loader.py" in out.answer,
        files={
            "app/main.py": "from app.settings_loader import parse_config\n\nparse_config('x')\n",
            "app/settings_loader.py": "def parse_config(path):\n    return {'path': path}\n",
            "app/util.py": "def helper():\n    return 1\n",
        },
    ),
    Task(
        "plot-cell",
        "Insert a code cell below this one that plots y = x**2 for x from 0 to 10 with matplotlib, "
        "then run that cell.",
        _plot_ok,
    ),
    Task(
        "pdf-answer",
        "What is the launch code in report.pdf?",
        lambda out: "4711" in out.answer,
        prepare=_pdf,
    ),
    Task(
        "todo-plan",
        "First make a plan with TodoWrite with two steps: 1) create numbers.txt holding the numbers 1 to 5, "
        "one per line; 2) count its lines with Bash. Then do both steps.",
        _plan_ok,
    ),
    Task(
        "denied-command",
        "Delete the file important.txt with the rm command.",
        _refused_ok,
        files={"important.txt": "do not delete\n"},
        deny=["Bash(rm:*)", "Delete"],
    ),
]
