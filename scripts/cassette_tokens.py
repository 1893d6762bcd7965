"""Recompute the token counts (and pace) of the example cassettes from the requests goat really sends.

    python scripts/cassette_tokens.py            # rewrite examples/cassettes/*.json in place
    python scripts/cassette_tokens.py --check    # only report turns whose counts are off
    python scripts/cassette_tokens.py --log DIR/teaching_demo.jsonl   # add a browser run's requests

Each example notebook is run headless and offline (nbconvert, no API key) with the replay server
logging every request; each played turn then gets `usage.prompt_tokens` counted by litellm for that
request (system prompt + tool definitions + history), `completion_tokens` for its own text and tool
calls, and a realistic pace. Rerun it whenever the system prompt, a tool description or a cassette's
conversation changes. Turns a headless run does not reach (the teaching demo's clicked branches)
are counted from a browser run's log: `GOAT_UI_TESTS_REQUEST_LOGS=DIR bash scripts/ui-tests
tests/dataframe_agent.spec.ts` keeps DIR/NAME.jsonl; pass it with --log, and the notebook's name too:
a turn played both ways (Read sees the live outputs only in JupyterLab) records their mean. To record a cassette from a
real model instead, see README ("Example cassettes").
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(REPO))

from goat_jupyter.replay import REQUEST_LOG_ENV  # noqa: E402
from goat_jupyter.replay.cassette import load_cassette  # noqa: E402
from goat_jupyter.replay.offline import PROVIDER_KEYS  # noqa: E402
from goat_jupyter.replay.tokens import off_counts, read_log, update_cassette  # noqa: E402


def offline_env(home: Path, log: Path) -> dict[str, str]:
    """This environment without provider keys or goat settings, logging replayed requests to `log`."""
    dropped = {*PROVIDER_KEYS, "OPENAI_API_BASE", "OPENAI_BASE_URL"}
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("GOAT_")}
    env.update({"GOAT_HOME": str(home), REQUEST_LOG_ENV: str(log)})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_example(name: str, scratch: Path) -> list[dict[str, Any]]:
    """Run one example headless in a copy of examples/; the requests it sent, as logged."""
    workdir = scratch / name.removesuffix(".ipynb")
    shutil.copytree(EXAMPLES, workdir, ignore=shutil.ignore_patterns(".goat/sessions", "*.py"))
    log = scratch / f"{name}.jsonl"
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", name]
    command += ["--output", str(scratch / f"{name}.out.ipynb"), "--ExecutePreprocessor.timeout=300"]
    run = subprocess.run(
        command, cwd=workdir, env=offline_env(scratch / "home", log), capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"{name} failed:\n{run.stderr[-3000:]}")
    return list(read_log(log)) if log.exists() else []


def by_cassette(entries: list[dict[str, Any]]) -> dict[Path, list[dict[str, Any]]]:
    """Log entries grouped by the repository cassette they came from (the run used a copy)."""
    grouped: dict[Path, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        if entry.get("cassette"):
            grouped[EXAMPLES / "cassettes" / Path(entry["cassette"]).name].append(entry)
    return grouped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="report only; change no file")
    parser.add_argument("--log", action="append", default=[], help="also use this request log (JSONL)")
    parser.add_argument(
        "notebooks", nargs="*", help="example notebooks to run (default: all, none with --log)"
    )
    args = parser.parse_args()
    names = args.notebooks or ([] if args.log else sorted(p.name for p in EXAMPLES.glob("*.ipynb")))
    with tempfile.TemporaryDirectory(prefix="goat-tokens-") as tmp:
        entries = [entry for log in args.log for entry in read_log(log)]
        entries += [entry for name in names for entry in run_example(name, Path(tmp))]
    failures = 0
    for cassette, played in by_cassette(entries).items():
        if args.check:
            problems = off_counts(load_cassette(cassette), played)
            failures += len(problems)
            print(f"{cassette.name}: " + ("; ".join(problems) or "token counts match"))
        else:
            print(f"{cassette.name}: {update_cassette(cassette, played)} turn(s) updated")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
