"""The peer harness: smolagents' CodeAgent on the same server, questions and CSVs (issue 34).

Runs in its own venv (run.py makes it under the local-model cache), so it imports nothing from this
project: it reads the questions as JSON, answers each with a fresh CodeAgent whose working folder
holds the CSVs, and prints one JSON line per question.

    PEER_PYTHON peer_agent.py QUESTIONS.json --api-base URL --model NAME --max-steps N --temperature T
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from smolagents import CodeAgent, OpenAIServerModel  # pyright: ignore[reportMissingImports]


def answer(agent: Any, text: str) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the agent's own prints stay off the results
            result = agent.run(text, return_full_result=True)
    except Exception as exc:  # the peer's own failure is a missed question, not a stopped benchmark
        return {
            "answer": "",
            "turns": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "wall_s": time.perf_counter() - started,
            "stop_reason": f"error: {exc!r}"[:200],
        }
    usage = result.token_usage
    # smolagents 1.26 gives the steps as dicts; an action step (one model turn) has a step number
    steps = [s for s in result.steps if isinstance(s, dict) and "step_number" in s]
    return {
        "answer": "" if result.output is None else str(result.output),
        "turns": len(steps),
        "prompt_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "output_tokens", 0) or 0),
        "wall_s": time.perf_counter() - started,
        "stop_reason": str(result.state),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("questions", type=Path)
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.0)
    args = parser.parse_args()
    model = OpenAIServerModel(
        model_id=args.model, api_base=args.api_base, api_key="local", temperature=args.temperature
    )
    for question in json.loads(args.questions.read_text()):
        agent = CodeAgent(
            tools=[],
            model=model,
            max_steps=args.max_steps,
            verbosity_level=0,
            additional_authorized_imports=["pandas", "numpy", "csv", "statistics", "math", "datetime"],
        )
        print(json.dumps({"qid": question["qid"], **answer(agent, question["text"])}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
