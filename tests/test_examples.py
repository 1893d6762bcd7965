"""Every example notebook runs end to end headless, offline, with no API key (nbconvert --execute),
and the token counts its cassette reports are those of the requests goat really sends."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from goat_jupyter.replay import REQUEST_LOG_ENV, ResponseTurn, load_cassette
from goat_jupyter.replay.offline import PROVIDER_KEYS
from goat_jupyter.replay.tokens import TOLERANCE, off_counts, read_log

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))

pytestmark = pytest.mark.timeout(300)

# What each recorded session must visibly produce when replayed against the real tools.
EXPECTED = {
    "quickstart.ipynb": ["Hello from goat!", "hello.py"],
    "data_analysis.ipynb": ["131,033.41", "weakest region: South", "by_region"],
    "dataframe_agent.ipynb": [
        "pandas.DataFrame with shape (48, 4)",
        "revenue  float64    0 null",
        "Inserted a new code cell",
        "(image 1: PNG image",
        "data:image/png;base64,",
        "Inserted a new markdown cell",
        "East leads every month",
        "Headless: working in a copy of this folder",
    ],
    "classroom.ipynb": [
        "output style: tutor",
        "389",
        "TODO(you)",
        "Inserted a new code cell",
        "77.8",
        "Headless: working in a copy of this folder",
    ],
    "teaching_demo.ipynb": [
        "## Plan: `report.py`",
        "Run this notebook in JupyterLab and click **Approve**",
        "report.py was not written in this run",
    ],
}
# Headless, nobody can review a plan or answer a question: the transcript says so (the recorded
# session has a branch for it); clicked runs are played in ui-tests/tests/dataframe_agent.spec.ts.
EXPECTED_ERRORS = {
    # The recorded model tries once to write into the student's cell: tutor style refuses it.
    "classroom.ipynb": ["Error: Not changed: cell 4 (id student) was written (or edited) by the student"],
    "teaching_demo.ipynb": [
        "Error: No user can review the plan in this run",
        "Error: No user can answer questions in this run",
    ],
}


def offline_env(home: Path, log: Path) -> dict[str, str]:
    dropped = {*PROVIDER_KEYS, "OPENAI_API_BASE", "OPENAI_BASE_URL"}
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("GOAT_")}
    env["GOAT_HOME"] = str(home)
    env[REQUEST_LOG_ENV] = str(log)
    return env


def all_output_text(notebook: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else "")
    return "\n".join(parts)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_example_runs_offline(name: str, tmp_path: Path) -> None:
    workdir = tmp_path / "examples"
    # As `cp -r examples/*` copies it: no hidden files, so no project settings can allow anything.
    shutil.copytree(EXAMPLES, workdir, ignore=shutil.ignore_patterns(".*", "*.py"))
    out = tmp_path / "out.ipynb"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            name,
            "--output",
            str(out),
            "--ExecutePreprocessor.timeout=240",
        ],
        cwd=workdir,
        env=offline_env(tmp_path / "home", tmp_path / "requests.jsonl"),
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = nbformat.read(out, as_version=4)
    text = all_output_text(executed)
    assert "replaying the recorded session" in text
    for expected in EXPECTED_ERRORS.get(name, []):
        assert expected in text, f"{expected!r} missing from the outputs of {name}"
        text = text.replace(expected, "")
    assert "Error: " not in text, text[-3000:]
    assert "Traceback" not in text
    for expected in EXPECTED[name]:
        assert expected in text, f"{expected!r} missing from the outputs of {name}"
    check_token_counts(name, tmp_path / "requests.jsonl")


def check_token_counts(name: str, log: Path) -> None:
    """Every played turn reports about the prompt tokens its request really holds (litellm's count)."""
    entries = list(read_log(log))
    assert entries, f"{name} sent no request to its cassette"
    cassette = load_cassette(EXAMPLES / "cassettes" / Path(entries[0]["cassette"]).name)
    problems = off_counts(cassette, entries)
    assert not problems, (
        f"{name}: prompt tokens more than {TOLERANCE:.0%} off (the system prompt, a tool description or "
        f"the conversation changed); rerun `python scripts/cassette_tokens.py`:\n" + "\n".join(problems)
    )


def test_examples_exist() -> None:
    assert {
        "classroom.ipynb",
        "quickstart.ipynb",
        "data_analysis.ipynb",
        "dataframe_agent.ipynb",
        "teaching_demo.ipynb",
    } <= set(NOTEBOOKS)


INSTALL = "pip install -e '.[lab,examples]' && "
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>")
# The argument each recorded call's transcript line names (ui/text.py MAIN_ARGUMENT).
CALLED_ON = {"Write": "file_path", "Bash": "command", "Glob": "pattern"}


def readme_first_command() -> str:
    """The first command of the README's quick start."""
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    return quick_start.split("```bash\n", 1)[1].split("\n", 1)[0]


def exporter_entry_points(folder: Path) -> Path:
    """The entry points pyproject.toml declares, where importlib.metadata finds them (as pip installs
    them), so the README's `--to goat` resolves here even if the installed package predates it."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    info = folder / "goat_jupyter_entry_points-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: goat-jupyter-entry-points\nVersion: 0\n")
    exporters = project["entry-points"]["nbconvert.exporters"]
    lines = ["[nbconvert.exporters]", *(f"{name} = {target}" for name, target in exporters.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return folder


def test_the_quick_start_prints_a_transcript_a_person_can_read(tmp_path: Path) -> None:
    command = readme_first_command()
    assert command.startswith(INSTALL), command
    argv = shlex.split(command.removeprefix(INSTALL))
    assert argv[:2] == ["jupyter", "nbconvert"] and "--stdout" in argv, argv
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns(".goat/sessions", "*.py"))
    env = offline_env(tmp_path / "home", tmp_path / "requests.jsonl")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(exporter_entry_points(tmp_path / "entry"))])
    run = subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    printed = run.stdout
    assert not TAG.search(printed) and "style=" not in printed, printed
    assert "Loading litellm" not in printed and "\n\n\n" not in printed, printed
    lines = printed.splitlines()
    assert all(line == line.rstrip() for line in lines), "no trailing blanks"
    turns = [
        t
        for t in load_cassette(EXAMPLES / "cassettes" / "quickstart.json").turns
        if isinstance(t, ResponseTurn)
    ]
    for call in (call for turn in turns for call in turn.tool_calls):
        assert isinstance(call.arguments, dict)
        called = f"✓ {call.name}({call.arguments[CALLED_ON[call.name]]}) · "
        [line] = [line for line in lines if line.startswith(called)]  # one line per call, with a summary
        assert re.search(r" · [^·]+ · [0-9.]+s$", line), line
    for answer in (turn.text for turn in turns if turn.text and not turn.tool_calls):
        assert answer in printed, f"the final answer {answer!r} is missing:\n{printed}"
    footers = [line for line in lines if line.startswith("── Done · ")]
    assert len(footers) == sum(1 for line in lines if line.endswith("%%goat")), printed


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_an_example_opens_unmodified_its_kernelspec_as_jupyterlab_writes_it(name: str) -> None:
    """Issue 33 point 13: JupyterLab rewrites a kernelspec whose display name differs from the kernel's,
    which marks the notebook modified the moment it opens."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    written = nbformat.read(EXAMPLES / name, as_version=4).metadata["kernelspec"]
    assert dict(written) == {"display_name": spec.display_name, "language": spec.language, "name": "python3"}
