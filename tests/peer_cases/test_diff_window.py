"""Edit's unified diff runs difflib only between the common head and tail: it must stay a correct
patch (applying it to the old text gives the new one) and keep difflib's hunk numbering."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.tools.files.edit import unified_diff

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
LINES = st.lists(st.sampled_from(["a", "b", "c", "", "d d"]), max_size=40)


def patched(before: list[str], diff: str) -> list[str]:
    """Apply a unified diff, checking every context and removed line against `before`."""
    result: list[str] = []
    taken = 0
    lines = diff.split("\n")[2:] if diff else []
    for line in lines:
        header = HUNK.match(line)
        if header:
            start = int(header[1]) - (0 if header[2] == "0" else 1)
            result += before[taken:start]
            taken = start
        elif line[:1] in (" ", "-"):
            assert before[taken] == line[1:]
            taken += 1
            if line[0] == " ":
                result.append(line[1:])
        else:
            assert line[:1] == "+"
            result.append(line[1:])
    return result + before[taken:]


@settings(max_examples=500, deadline=None)
@given(LINES, LINES)
def test_the_windowed_diff_is_a_correct_patch(old: list[str], new: list[str]) -> None:
    before, after = "\n".join(old), "\n".join(new)
    diff = unified_diff(Path("/x"), before, after)
    assert patched(before.splitlines(), diff) == after.splitlines()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10**6).map(str), min_size=1, max_size=60, unique=True), st.data())
def test_unambiguous_files_give_difflibs_exact_output(old: list[str], data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(old)))
    new = [*old[:at], "inserted", *old[at + data.draw(st.integers(0, 3)) :]]
    before, after = "\n".join(old), "\n".join(new)
    reference = difflib.unified_diff(old, new, "/x", "/x", lineterm="")
    assert unified_diff(Path("/x"), before, after) == "\n".join(reference)
