"""Cost of the Bash permission analysis per command: tree-sitter analysis vs the old hand-written splitter.

Both run uncached on the same commands (realistic model commands plus the adversarial ones from the
tests), in interleaved rounds; prints microseconds per command and the ratio new/old, and for scale
the cost of starting `bash -c true` (what every Bash call pays anyway).
The old splitter is loaded from git history (the commit before the parser change).
Run: python benchmarks/bench_shell_parse.py [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from goat_jupyter.permissions.shell import analyse

OLD_COMMIT = "c6b3e64"  # main before the tree-sitter analysis
ROOT = Path(__file__).resolve().parent.parent

COMMANDS = [
    "ls -la",
    "git status",
    "git diff HEAD~1 -- src",
    "git log --oneline | head -20",
    "cd src && ls",
    "python -m pytest -q -x tests/test_permissions.py",
    "grep -rn 'def main' . | head",
    "find . -name '*.py' -newer setup.cfg | xargs wc -l",
    "npm test 2>&1 | tail -50",
    "cat <<'EOF' > notes.txt\nhello $(world)\nEOF",
    'for f in *.py; do echo "$f"; wc -l "$f"; done',
    "if [ -f x ]; then cat x; else echo none; fi",
    "diff <(sort a) <(sort b)",
    "echo $'a\\'b' ; rm victim",
    "sudo -u root timeout 5 bash -c 'ls; rm x'",
    "case $x in a) rm x;; *) ls;; esac",
    "find . -exec rm {} \\;",
    "pip install -e '.[test]' && python -c 'import goat_jupyter'",
    "export A=1; env B=2 nice -n 5 make -j4 all",
    "tar czf out.tgz $(git ls-files) && ls -la out.tgz",
]


def old_splitter() -> Callable[[str], object]:
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:goat_jupyter/permissions_shell.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("old_permissions_shell")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, "old_permissions_shell.py", "exec"), module.__dict__)
    split = module.split_command
    return lambda command: split.__wrapped__(command)


def new_analysis(command: str) -> object:
    return analyse.__wrapped__(command)


def spawn_bash(command: str) -> object:
    return subprocess.run(["bash", "-c", "true"], check=True)


def per_command(run: Callable[[str], object], commands: list[str], inner: int) -> float:
    started = time.perf_counter()
    for _ in range(inner):
        for command in commands:
            run(command)
    return (time.perf_counter() - started) / (inner * len(commands))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    contenders = {"old splitter": old_splitter(), "tree-sitter analysis": new_analysis}
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for run in contenders.values():
        per_command(run, COMMANDS, 5)  # warm up
    for _ in range(repeat):
        for name, run in contenders.items():
            times[name].append(per_command(run, COMMANDS, 50))
    spawn = statistics.median(per_command(spawn_bash, COMMANDS[:1], 20) for _ in range(3))
    old, new = (statistics.median(times[name]) for name in contenders)
    print(f"{len(COMMANDS)} commands, {repeat} interleaved rounds, medians per command:")
    print(f"  old splitter          {old * 1e6:8.1f} us")
    print(f"  tree-sitter analysis  {new * 1e6:8.1f} us")
    print(f"  ratio new/old         {new / old:8.2f}")
    print(f"  for scale: bash -c true {spawn * 1e6:8.0f} us (analysis = {new / spawn:.1%} of a spawn)")


if __name__ == "__main__":
    main()
