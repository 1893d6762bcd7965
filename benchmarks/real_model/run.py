"""Run the task suite against a real model (issue 23): pass rate, turns, wall time, tokens per task.

Each task gets a fresh workspace and a fresh kernel with goat loaded, a live notebook (the test
frontend answers the notebook bridge), and one `%%goat` cell. Not part of CI or pytest: it needs a
model server (scripts/local-model) and minutes per task.

Run: nice python benchmarks/real_model/run.py --api-base http://127.0.0.1:8089/v1 \
         --model openai/qwen2.5-coder-1.5b --profiles lean,full [--tasks script,csv-lines] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # runnable from a checkout; the kernel imports this checkout too

from benchmarks.real_model.tasks import TASKS, Outcome, Task  # noqa: E402
from tests.kernel_harness import KernelSession  # noqa: E402
from tests.notebook_frontend import FakeNotebookFrontend, new_cell  # noqa: E402

NB = "nb.ipynb"


@dataclass
class Result:
    task: str
    profile: str
    passed: bool
    turns: int
    wall_s: float
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    stop_reason: str
    tools: list[str]
    answer: str


def workspace_for(task: Task, root: Path, args: argparse.Namespace, profile: str) -> Path:
    workspace = root / f"{profile}-{task.name}"
    for name, text in task.files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    workspace.mkdir(parents=True, exist_ok=True)
    if task.prepare is not None:
        task.prepare(workspace)
    settings: dict[str, Any] = {
        "api_base": args.api_base,
        "tool_profile": profile,
        "context_window": args.context_window,
        "max_turns": args.max_turns,
        "first_token_timeout_s": 600,
        "idle_timeout_s": 300,
        "permissions": {"deny": task.deny},
    }
    (workspace / ".goat").mkdir(exist_ok=True)
    (workspace / ".goat" / "settings.json").write_text(json.dumps(settings))
    return workspace


def kernel_env(root: Path, args: argparse.Namespace) -> dict[str, str]:
    home = root / "home"
    home.mkdir(exist_ok=True)
    return {
        "GOAT_MODEL": args.model,
        "GOAT_HOME": str(home),
        "GOAT_PERMISSION_MODE": "bypassPermissions",  # deny rules still apply
        "OPENAI_API_KEY": "local",
    }


def session_lines(workspace: Path) -> list[dict[str, Any]]:
    files = sorted((workspace / ".goat" / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not files:
        return []
    return [json.loads(line) for line in files[-1].read_text().splitlines() if line.strip()]


def summarise(lines: list[dict[str, Any]]) -> dict[str, Any]:
    usage = [line for line in lines if line.get("type") == "usage"]
    runs = [line for line in lines if line.get("type") == "run"]
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    tools = [c["function"]["name"] for m in messages for c in m.get("tool_calls") or []]
    answers = [str(m.get("content") or "") for m in messages if m.get("role") == "assistant"]
    return {
        "turns": runs[-1]["turns"] if runs else len(usage),
        "stop_reason": runs[-1]["stop_reason"] if runs else "none",
        "prompt_tokens": sum(int(u.get("prompt_tokens") or 0) for u in usage),
        "completion_tokens": sum(int(u.get("completion_tokens") or 0) for u in usage),
        "cached_tokens": sum(int(u.get("cached_tokens") or 0) for u in usage),
        "tools": tools,
        "answer": answers[-1] if answers else "",
    }


async def run_task(task: Task, root: Path, args: argparse.Namespace, profile: str) -> Result:
    workspace = workspace_for(task, root, args, profile)
    async with KernelSession(workspace, kernel_env(root, args)) as kernel:
        await kernel.execute("%load_ext goat_jupyter", timeout=300)  # a loaded machine is slow here
        if task.kernel_setup:
            await kernel.execute(task.kernel_setup, timeout=300)
        cells = [new_cell("code", source) for source in task.cells] + [new_cell("code", "%%goat")]
        frontend = FakeNotebookFrontend(NB, cells, server_root=str(workspace)).attach(kernel)
        goat_cell = frontend.cells()[-1]["id"]
        started = time.perf_counter()
        await kernel.execute(
            f"%%goat\n{task.prompt}", timeout=args.task_timeout, metadata={"cellId": goat_cell}
        )
        wall = time.perf_counter() - started
        facts = summarise(session_lines(workspace))
        outcome = Outcome(workspace, facts["answer"], facts["tools"], frontend.cells())
        try:
            passed = bool(task.check(outcome))
        except Exception:  # a check that cannot even run is a failed task
            passed = False
    return Result(task.name, profile, passed, wall_s=wall, **facts)


def table(results: list[Result]) -> str:
    lines = [
        "| task | profile | pass | turns | wall s | prompt tok | cached tok | output tok | tools |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tools = ", ".join(r.tools) or "(none)"
        lines.append(
            f"| {r.task} | {r.profile} | {'yes' if r.passed else 'no'} | {r.turns} | {r.wall_s:.0f} | "
            f"{r.prompt_tokens} | {r.cached_tokens} | {r.completion_tokens} | {tools} |"
        )
    return "\n".join(lines)


def totals(results: list[Result]) -> str:
    out: list[str] = []
    for profile in sorted({r.profile for r in results}):
        mine = [r for r in results if r.profile == profile]
        passed = sum(r.passed for r in mine)
        turns = sum(r.turns for r in mine) / len(mine)
        wall = sum(r.wall_s for r in mine) / len(mine)
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in mine) / len(mine)
        out.append(
            f"{profile}: {passed}/{len(mine)} passed; per task {turns:.1f} turns, {wall:.0f} s, {tokens:.0f} tokens"
        )
    return "\n".join(out)


async def main() -> None:
    parser = argparse.ArgumentParser(description="Run the task suite against a real model.")
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--profiles", default="lean,full")
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS))
    parser.add_argument("--context-window", type=int, default=32_768)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--task-timeout", type=float, default=900)
    parser.add_argument("--out", type=Path, default=None, help="append results as JSON lines")
    args = parser.parse_args()
    chosen = [t for t in TASKS if t.name in args.tasks.split(",")]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="goat-real-model-") as tmp:
        for profile in args.profiles.split(","):
            for task in chosen:
                try:
                    result = await run_task(task, Path(tmp), args, profile)
                except Exception as exc:  # a kernel that did not answer in time: the task failed
                    result = Result(
                        task.name, profile, False, 0, 0.0, 0, 0, 0, f"harness: {exc!r}"[:200], [], ""
                    )
                results.append(result)
                print(json.dumps(asdict(result)), flush=True)
                if args.out is not None:
                    with args.out.open("a") as out:
                        out.write(json.dumps(asdict(result)) + "\n")
    print(table(results))
    print(totals(results))


if __name__ == "__main__":
    asyncio.run(main())
