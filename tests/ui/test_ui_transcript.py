"""The text transcript: what goat's cell outputs say in metadata.goat.transcript, and what
`jupyter nbconvert --to goat` prints of a notebook (goat's lines, Markdown as text, never HTML)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.tools.base import ToolOutput
from goat_jupyter.tools.events import (
    Event,
    Notice,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from goat_jupyter.ui import CellRenderer
from goat_jupyter.ui.export import TranscriptExporter
from goat_jupyter.ui.transcript import notebook_transcript
from tests.ui.test_ui_cell import FakeClock, RecordingDisplay, run

ROOT = Path(__file__).resolve().parents[2]
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>")
EXPORTER = "goat_jupyter.ui.export.TranscriptExporter"


def transcripts(events: list[Event]) -> list[str | None]:
    return [shown.transcript for shown in run(events).shown]


def test_each_block_says_its_transcript_line_and_the_status_line_none():
    lines = transcripts(
        [
            Notice("Starting the model client (first run in this kernel)…", "info", transient=True),
            TextDelta("Let me **look**.\n\n- one\n- two"),
            ToolStarted("c1", "Bash", "List", {"command": "ls -la"}),
            ToolFinished("c1", "Bash", ToolOutput("a.csv\nb.csv"), 0.12),
            ToolStarted("c2", "Read", "", {"file_path": "/nope.txt"}),
            ToolFinished("c2", "Read", ToolOutput("Error: /nope.txt does not exist", is_error=True), 0.01),
            Notice("Retrying", "warning"),
            RunFinished(2, 1000, 20, None, 4.2, "end_turn"),
        ]
    )
    assert lines == [
        "goat · model gpt-4o-mini · mode default",
        "",  # transient: it mattered while litellm loaded
        "Let me **look**.\n\n- one\n- two",  # the model's Markdown as it wrote it
        "✓ Bash(ls -la) · exit 0, 2 lines · 0.12s",
        "✗ Read(/nope.txt) · /nope.txt does not exist · 0.01s",
        "⚠ Retrying",
        "── Done · 2 turns · 1,020 tokens (1,000 in, 20 out) · 4.20s",
    ]


def test_the_transient_notice_still_shows_in_the_cell():
    sink = run([Notice("Starting the model client…", "info", transient=True)])
    assert "Starting the model client…" in sink.shown[1].final["text/html"]
    assert "Starting the model client…" in sink.shown[1].final["text/plain"]


def test_updates_carry_the_line_of_the_moment_and_a_running_card_ends_finished():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.handle(ToolStarted("c1", "Bash", "", {"command": "sleep 1"}))
    assert sink.shown[0].transcript == "⠋ Bash(sleep 1) · 0.00s"
    clock.now += 1
    renderer.handle(ToolProgress("c1", output="tick\n"))
    renderer.handle(ToolFinished("c1", "Bash", ToolOutput(""), 1.0))
    assert sink.shown[0].transcript == "✓ Bash(sleep 1) · exit 0, 0 lines · 1.00s"
    assert len(sink.shown[0].metadata) == len(sink.shown[0].bundles), "every update carries its line"


async def test_the_status_line_never_reaches_the_transcript():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("p", model="m", mode="default")
    clock.now += 3
    for _ in range(100):
        if len(sink.shown) > 1:
            break
        import asyncio

        await asyncio.sleep(0.05)
    status = sink.shown[1]
    assert "Stop to interrupt" in status.bundles[0]["text/plain"]
    assert status.metadata[0] == {"goat": {"transcript": ""}}
    renderer.close()


@given(
    name=st.sampled_from(["Bash", "Read", "Grep", "MyTool", "Agent"]),
    args=st.dictionaries(st.sampled_from(["command", "file_path", "pattern", "x"]), st.text(), max_size=3),
    content=st.text(),
    summary=st.text(),
    error=st.booleans(),
)
def test_a_tool_call_is_always_one_line(
    name: str, args: dict[str, Any], content: str, summary: str, error: bool
) -> None:
    output = ToolOutput(content, is_error=error, summary=summary)
    [card] = transcripts([ToolStarted("c", name, "", args), ToolFinished("c", name, output, 0.5)])[1:2]
    assert card is not None and len(card.splitlines()) == 1
    assert card.startswith("✗ " if error else "✓ ") and card.endswith("0.50s")


def new_output(kind: str, *args: Any, **kwargs: Any) -> Any:
    return nbformat.v4.new_output(kind, *args, **kwargs)  # pyright: ignore[reportUnknownMemberType]


def display(data: dict[str, Any], transcript: str | None = None, **metadata: Any) -> Any:
    if transcript is not None:
        metadata = {**metadata, "goat": {**metadata.get("goat", {}), "transcript": transcript}}
    return new_output("display_data", data, metadata=metadata)


def notebook(*cells: Any) -> Any:
    return nbformat.v4.new_notebook(cells=list(cells))  # pyright: ignore[reportUnknownMemberType]


def code(source: str, *outputs: Any, count: int | None = 1) -> Any:
    cell = nbformat.v4.new_code_cell(source, outputs=list(outputs))  # pyright: ignore[reportUnknownMemberType]
    cell.execution_count = count
    return cell


HTML_CARD = (
    '<details style="margin:1px 0"><summary><b>Bash</b> <code>ls</code></summary><pre>a</pre></details>'
)


def test_goat_outputs_print_their_lines_and_blocks_stand_apart_by_one_blank_line():
    nb = notebook(
        nbformat.v4.new_markdown_cell("# Title\n\nSome *text*."),  # pyright: ignore[reportUnknownMemberType]
        code(
            "%%goat\nList the files",
            display({"text/html": "<div>goat</div>", "text/plain": "goat · model m"}, "goat · model m"),
            display({"text/plain": ""}, ""),  # the hidden status line
            display({"text/markdown": "I'll **look**.", "text/plain": "I'll **look**."}, "I'll **look**."),
            display({"text/html": HTML_CARD, "text/plain": "⏺ Bash(ls)\n  ⎿ ✓ …"}, "✓ Bash(ls) · 0.1s"),
            display({"text/html": HTML_CARD, "text/plain": "⏺ Bash(pwd)\n  ⎿ ✓ …"}, "✓ Bash(pwd) · 0.1s"),
            display({"text/markdown": "Done.", "text/plain": "Done."}, "Done."),
            display(
                {"text/html": '<div style="x">Done · 1 turn</div>', "text/plain": "Done · 1 turn"}, "── Done"
            ),
            count=2,
        ),
    )
    assert notebook_transcript(nb) == (
        "# Title\n\nSome *text*.\n\n"
        "In [2]: %%goat\n   ...: List the files\n\n"
        "goat · model m\n\n"
        "I'll **look**.\n\n"
        "✓ Bash(ls) · 0.1s\n✓ Bash(pwd) · 0.1s\n\n"
        "Done.\n\n"
        "── Done\n"
    )


def test_other_outputs_print_as_text_and_html_never_shows():
    nb = notebook(
        code(
            "import pandas",
            new_output("stream", name="stdout", text="\x1b[31mred\x1b[0m\n"),
            new_output(
                "execute_result",
                {"text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "   a\n0  1"},
                execution_count=1,
            ),
            display({"text/html": "<p>only <b>html</b></p>"}),
            display({"image/png": "iVBOR"}),
            display(
                {"text/html": "<div>Revert</div>", "text/plain": "Reverted %%goat run 1"},
                goat={"record": "k"},
            ),
            new_output(
                "error", ename="ValueError", evalue="bad", traceback=["\x1b[0;31mValueError\x1b[0m: bad"]
            ),
        )
    )
    text = notebook_transcript(nb)
    assert text == (
        "In [1]: import pandas\n\nred\n\n   a\n0  1\n\nonly html\n\n[image/png]\n\nReverted %%goat run 1\n\n"
        "ValueError: bad\n"
    )


def test_a_notebook_saved_before_transcript_lines_falls_back_to_text_plain():
    old_card = display({"text/html": HTML_CARD, "text/plain": "⏺ Bash(ls)\n  ⎿ ✓ 0.10s · exit 0"})
    assert "⏺ Bash(ls)\n  ⎿ ✓ 0.10s · exit 0" in notebook_transcript(notebook(code("%%goat\nx", old_card)))


SOURCES = st.text(st.sampled_from("ab \n<>"), max_size=12)


@given(
    st.lists(
        st.one_of(
            SOURCES.map(lambda t: display({"text/html": "<b>x</b>", "text/plain": t}, t)),
            SOURCES.map(lambda t: display({"text/markdown": t, "text/plain": t}, t)),
            SOURCES.map(lambda t: new_output("stream", name="stdout", text=t)),
        ),
        max_size=8,
    ),
    SOURCES,
)
def test_never_a_run_of_blank_lines_nor_trailing_space(outputs: list[Any], source: str) -> None:
    text = notebook_transcript(notebook(code(source, *outputs), nbformat.v4.new_markdown_cell(source)))  # pyright: ignore[reportUnknownMemberType]
    assert "\n\n\n" not in text and not text.startswith("\n")
    assert all(line == line.rstrip() for line in text.splitlines())
    assert "<b>x</b>" not in text


def test_the_exporter_returns_the_transcript_and_names_a_text_file():
    nb = notebook(code("print(1)", new_output("stream", name="stdout", text="1\n")))
    exporter = TranscriptExporter()
    output, resources = exporter.from_notebook_node(nb)
    assert output == "In [1]: print(1)\n\n1\n"
    assert exporter.file_extension == ".txt" and resources["output_extension"] == ".txt"


def test_pyproject_registers_the_exporter_as_goat():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module, _, name = project["entry-points"]["nbconvert.exporters"]["goat"].partition(":")
    assert f"{module}.{name}" == EXPORTER


def test_nbconvert_converts_a_saved_notebook_to_the_transcript(tmp_path: Path):
    saved = tmp_path / "nb.ipynb"
    card = display({"text/html": HTML_CARD, "text/plain": "⏺ Bash(ls)\n  ⎿ ✓"}, "✓ Bash(ls) · 0.1s")
    nbformat.write(notebook(code("%%goat\nls", card)), saved)  # pyright: ignore[reportUnknownMemberType]
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", EXPORTER, "--stdout", str(saved)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout == "In [1]: %%goat\n   ...: ls\n\n✓ Bash(ls) · 0.1s\n"
    assert not TAG.search(done.stdout)
