"""Run the task suite and the data questions against a real model (issues 23, 34): pass rate, turns,
wall time, tokens per task, per harness (goat tools-style, goat code-style, the peer) and profile.

Each goat task gets a fresh workspace and a fresh kernel with goat loaded, a live notebook (the test
frontend answers the notebook bridge), and one `%%goat` cell. The peer harness (smolagents' CodeAgent,
installed by this script in its own venv under the local-model cache) answers the same data questions
over the same CSVs on the same server. Not part of CI or pytest: it needs a model server
(scripts/local-model) and minutes per task.

Run: nice python benchmarks/real_model/run.py --api-base http://127.0.0.1:8089/v1 \
         --model openai/qwen2.5-coder-1.5b --profiles lean --suite data \
         [--harness goat-tools,goat-code,peer] [--questions 8] [--tasks script,csv-lines] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # runnable from a checkout; the kernel imports this checkout too

from benchmarks.real_model.data_questions import QUESTIONS, Question, score, write_tables  # noqa: E402
from benchmarks.real_model.tasks import TASKS, Outcome, Task  # noqa: E402
from tests.kernel_harness import KernelSession  # noqa: E402
from tests.notebook_frontend import FakeNotebookFrontend, new_cell  # noqa: E402

NB = "nb.ipynb"
CACHE = Path(os.environ.get("GOAT_LOCAL_MODEL_CACHE", Path.home() / ".cache" / "goat-local-model"))
PEER_VENV = CACHE / "peer-venv"
PEER_REQUIREMENTS = ["smolagents[openai]==1.26.*", "pandas", "numpy"]
STYLES = {"goat-tools": "tools", "goat-code": "code"}  # harness -> goat's `action_style` setting


@dataclass
class Result:
    task: str
    harness: str
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


def data_task(question: Question) -> Task:
    """A data question as a goat task: the CSVs in the workspace, the answer scored."""
    return Task(question.qid, question.text, lambda out: score(question, out.answer), prepare=write_tables)


def workspace_for(task: Task, root: Path, args: argparse.Namespace, harness: str, profile: str) -> Path:
    workspace = root / f"{harness}-{profile}-{task.name}"
    for name, text in task.files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    workspace.mkdir(parents=True, exist_ok=True)
    if task.prepare is not None:
        task.prepare(workspace)
    settings: dict[str, Any] = {
        "api_base": args.api_base,
        "tool_profile": profile,
        "action_style": STYLES[harness],  # goat's code-actions setting (issue 34); ignored where unknown
        "context_window": args.context_window,
        "max_turns": args.max_turns,
        "first_token_timeout_s": 600,
        "idle_timeout_s": 300,
        "permissions": {"deny": task.deny},
        "temperature": args.temperature,
    }
    # The user's file (a home per task), not the workspace's: a workspace's own settings wait for the
    # folder-trust question in the cell, which nobody answers here.
    home_for(workspace).mkdir(exist_ok=True)
    (home_for(workspace) / "settings.json").write_text(json.dumps(settings))
    return workspace


def home_for(workspace: Path) -> Path:
    return workspace.with_name(f"home-{workspace.name}")


def kernel_env(workspace: Path, args: argparse.Namespace) -> dict[str, str]:
    home = home_for(workspace)
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
    tools += [name for line in lines if line.get("type") == "code_actions" for name in line.get("calls", [])]
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


async def run_task(task: Task, root: Path, args: argparse.Namespace, harness: str, profile: str) -> Result:
    workspace = workspace_for(task, root, args, harness, profile)
    async with KernelSession(workspace, kernel_env(workspace, args)) as kernel:
        await kernel.execute("%load_ext goat_jupyter", timeout=300)  # a loaded machine is slow here
        if task.kernel_setup:
            await kernel.execute(task.kernel_setup, timeout=300)
        cells = [new_cell("code", source) for source in task.cells] + [new_cell("code", "%%goat")]
        frontend = FakeNotebookFrontend(NB, cells, server_root=str(workspace)).attach(kernel)
        goat_cell = frontend.cells()[-1]["id"]
        started = time.perf_counter()
        prompt = task.code_prompt if harness == "goat-code" and task.code_prompt else task.prompt
        await kernel.execute(f"%%goat\n{prompt}", timeout=args.task_timeout, metadata={"cellId": goat_cell})
        wall = time.perf_counter() - started
        lines = session_lines(workspace)
        facts = summarise(lines)
        if args.keep is not None:  # the conversation, to read what the model did
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / f"{workspace.name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        outcome = Outcome(workspace, facts["answer"], facts["tools"], frontend.cells())
        try:
            passed = bool(task.check(outcome))
        except Exception:  # a check that cannot even run is a failed task
            passed = False
    return Result(task.name, harness, profile, passed, wall_s=wall, **facts)


def table(results: list[Result]) -> str:
    lines = [
        "| task | harness | profile | pass | turns | wall s | prompt tok | cached tok | output tok | tools |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tools = ", ".join(r.tools) or "(none)"
        lines.append(
            f"| {r.task} | {r.harness} | {r.profile} | {'yes' if r.passed else 'no'} | {r.turns} | {r.wall_s:.0f} | "
            f"{r.prompt_tokens} | {r.cached_tokens} | {r.completion_tokens} | {tools} |"
        )
    return "\n".join(lines)


def totals(results: list[Result]) -> str:
    out: list[str] = []
    for harness, profile in sorted({(r.harness, r.profile) for r in results}):
        mine = [r for r in results if (r.harness, r.profile) == (harness, profile)]
        passed = sum(r.passed for r in mine)
        turns = sum(r.turns for r in mine) / len(mine)
        wall = sum(r.wall_s for r in mine) / len(mine)
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in mine) / len(mine)
        out.append(
            f"{harness} ({profile}): {passed}/{len(mine)} passed ({passed / len(mine):.0%}); "
            f"per task {turns:.1f} turns, {wall:.0f} s, {tokens:.0f} tokens"
        )
    return "\n".join(out)


def peer_python() -> Path:
    """The peer's venv, made on first use: smolagents never enters goat's environment."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_REQUIREMENTS], check=True)
    return python


def peer_result(question: Question, line: dict[str, Any]) -> Result:
    answer = str(line["answer"])
    return Result(
        question.qid,
        "peer",
        "-",
        score(question, answer),
        int(line["turns"]),
        float(line["wall_s"]),
        int(line["prompt_tokens"]),
        int(line["completion_tokens"]),
        0,
        str(line["stop_reason"]),
        [],
        answer,
    )


def run_peer(questions: list[Question], root: Path, args: argparse.Namespace) -> list[Result]:
    """smolagents' CodeAgent on the same server, questions and CSVs, one question at a time."""
    folder = root / "peer"
    folder.mkdir()
    write_tables(folder)
    spec = folder / "questions.json"
    spec.write_text(json.dumps([{"qid": q.qid, "text": q.text} for q in questions]))
    command = [
        str(peer_python()),
        str(Path(__file__).with_name("peer_agent.py")),
        str(spec),
        "--api-base",
        args.api_base,
        "--model",
        args.model.removeprefix("openai/"),
        "--max-steps",
        str(args.max_turns),
        "--temperature",
        str(args.temperature),
    ]
    by_id = {q.qid: q for q in questions}
    results: list[Result] = []
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, text=True) as peer:
        assert peer.stdout is not None
        for raw in peer.stdout:
            if raw.startswith('{"qid"'):  # anything else is the agent talking
                line = json.loads(raw)
                results.append(report(peer_result(by_id[line["qid"]], line), args))
    return results


def report(result: Result, args: argparse.Namespace) -> Result:
    print(json.dumps(asdict(result)), flush=True)
    if args.out is not None:
        with args.out.open("a") as out:
            out.write(json.dumps(asdict(result)) + "\n")
    return result


async def run_goat(tasks: list[Task], root: Path, args: argparse.Namespace, harness: str) -> list[Result]:
    results: list[Result] = []
    for profile in args.profiles.split(","):
        for task in tasks:
            try:
                result = await run_task(task, root, args, harness, profile)
            except Exception as exc:  # a kernel that did not answer in time: the task failed
                result = Result(
                    task.name, harness, profile, False, 0, 0.0, 0, 0, 0, f"harness: {exc!r}"[:200], [], ""
                )
            results.append(report(result, args))
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description="Run the task suite against a real model.")
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--profiles", default="lean,full")
    parser.add_argument(
        "--suite", default="tasks,data", help="tasks (the notebook tasks), data (the data questions)"
    )
    parser.add_argument("--harness", default="goat-tools,goat-code,peer", help="goat-tools, goat-code, peer")
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS))
    parser.add_argument("--questions", type=int, default=len(QUESTIONS), help="the first N data questions")
    parser.add_argument("--context-window", type=int, default=32_768)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--task-timeout", type=float, default=900)
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="sent by every harness (the server's own default is 0.8)",
    )
    parser.add_argument("--out", type=Path, default=None, help="append results as JSON lines")
    parser.add_argument("--keep", type=Path, default=None, help="keep each goat task's session log here")
    args = parser.parse_args()
    suites = args.suite.split(",")
    harnesses = args.harness.split(",")
    unknown = [h for h in harnesses if h not in (*STYLES, "peer")]
    if unknown:
        parser.error(f"unknown harness {', '.join(unknown)}: use goat-tools, goat-code, peer")
    questions = QUESTIONS[: args.questions] if "data" in suites else []
    tasks = [t for t in TASKS if t.name in args.tasks.split(",")] if "tasks" in suites else []
    tasks += [data_task(q) for q in questions]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="goat-real-model-") as tmp:
        for harness in harnesses:
            if harness == "peer":
                results += run_peer(questions, Path(tmp), args)  # the notebook tasks need goat's notebook
            else:
                results += await run_goat(tasks, Path(tmp), args, harness)
    print(table(results))
    print(totals(results))


if __name__ == "__main__":
    asyncio.run(main())
