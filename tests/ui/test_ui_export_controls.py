"""`jupyter nbconvert --to goat` prints no terminal control sequence from the model's text, a recording
or any output: clipboard writes (OSC 52), title changes, screen clears and fake colours arrive as text."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from goat_jupyter.ui.safe.controls import strip_controls

ROOT = Path(__file__).resolve().parents[2]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # puts `rm -rf ~` on the clipboard
TITLE = "\x1b]0;sudo password:\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
FAKE = "\x1b[32m✓ All tests passed\x1b[0m"
C1 = "\x9b31m red \x9d0;title\x9c"
PAYLOAD = f"{OSC52}{TITLE}{CLEAR}{FAKE}{C1}\x07\x08\x7f\x00\rover"


def goat_display(text: str) -> nbformat.NotebookNode:
    data = {"text/markdown": text, "text/plain": text}
    return new_output("display_data", data=data, metadata={"goat": {"transcript": text}})


def hostile_notebook() -> nbformat.NotebookNode:
    outputs = [
        goat_display(f"The model says {PAYLOAD}"),
        new_output("display_data", data={"text/plain": f"a recording's line {PAYLOAD}"}),
        new_output("display_data", data={"text/html": f"<b>html {PAYLOAD}</b>"}),
        new_output("stream", name="stdout", text=f"stream {PAYLOAD}\n"),
        new_output("error", ename="E", evalue="v", traceback=[f"trace {PAYLOAD}"]),
    ]
    cells = [
        new_markdown_cell(f"# notes {PAYLOAD}"),
        new_code_cell(f"%%goat\nsay {PAYLOAD}", outputs=outputs),
    ]
    return new_notebook(cells=cells)


def test_nbconvert_prints_no_control_sequence(tmp_path: Path) -> None:
    saved = tmp_path / "hostile.ipynb"
    nbformat.write(hostile_notebook(), saved)  # pyright: ignore[reportUnknownMemberType]
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "goat", "--stdout", str(saved)],
        capture_output=True,
        check=True,
        cwd=ROOT,
    )
    printed = done.stdout.decode("utf-8")
    assert not CONTROL.search(printed), repr(printed)
    assert "The model says ✓ All tests passed red" in printed  # the words stay, their effects go
    for where in ("# notes", "say", "a recording's line", "html", "stream", "trace"):
        assert where in printed
    assert "52;c;" not in printed and "sudo password" not in printed and "0;title" not in printed


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF)))
def test_stripped_text_keeps_no_control_but_tab_and_newline(text: str) -> None:
    stripped = strip_controls(text)
    assert not CONTROL.search(stripped)
    assert strip_controls(stripped) == stripped
