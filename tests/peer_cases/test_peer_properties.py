"""Properties of the tolerant Edit (hypothesis): never a wrong edit.

Derived from opencode's replace() rule "each replacer is accepted only when its match is unique" and
gemini-cli's edit.test.ts "occurrence count must match"; our own generators and assertions.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.tools.files.edit import find_replacements
from goat_jupyter.tools.files.edit_match import apply

PATH = Path("/ws/f.py")
WORD = st.text(alphabet="abcxyz=()'\"\u201c\u201d:.", min_size=1, max_size=6)
LINE = st.builds(
    lambda indent, words, trail: " " * indent + " ".join(words) + " " * trail,
    st.integers(0, 8),
    st.lists(WORD, min_size=0, max_size=4),
    st.integers(0, 2),
)
LINES = st.lists(LINE, min_size=1, max_size=12)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def normalised(text: str) -> str:
    return " ".join(text.translate(str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''")).split())


@SETTINGS
@given(
    st.text(min_size=0, max_size=20),
    st.text(min_size=1, max_size=8),
    st.text(max_size=20),
    st.text(max_size=20),
)
def test_an_ambiguous_exact_match_is_never_edited(before: str, old: str, middle: str, after: str) -> None:
    text = before + old + middle + old + after
    with pytest.raises(InvalidInputError, match="times"):
        find_replacements(text, old, "NEW", False, PATH)


@SETTINGS
@given(LINES, st.data())
def test_a_fallback_edit_changes_only_an_equivalent_region(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines) + "\n"
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    block = lines[first : last + 1]
    shift = data.draw(st.integers(-2, 3))
    old = "\n".join(_perturb(line, shift, data) for line in block)
    assume(old.strip())
    new = data.draw(st.text(alphabet="pq \n", max_size=12))
    assume(new != old)
    try:
        replacements, _ = find_replacements(text, old, new, False, PATH)
    except InvalidInputError:
        return  # not found, or ambiguous: the file would stay unchanged
    (only,) = replacements
    result = apply(text, replacements)
    assert result.startswith(text[: only.start]) and result.endswith(text[only.end :])
    assert normalised(text[only.start : only.end]) == normalised(old)


def _perturb(line: str, shift: int, data: st.DataObject) -> str:
    body = line.lstrip()
    indent = max(0, len(line) - len(body) + shift)
    if data.draw(st.booleans()):
        body = re.sub(" ", "  ", body)
    return " " * indent + body.rstrip() + " " * data.draw(st.integers(0, 2))


@SETTINGS
@given(LINES, st.data())
def test_a_unique_exact_match_is_replaced_exactly(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines)
    assume(text)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    assume(text.count(old) == 1)
    new = data.draw(st.text(alphabet="pq \n", min_size=1, max_size=10))
    replacements, strategy = find_replacements(text, old, new, False, PATH)
    assert strategy == "exact"
    assert apply(text, replacements) == text.replace(old, new, 1)


@SETTINGS
@given(LINES, st.integers(0, 4), st.integers(0, 4))
def test_two_equivalent_near_misses_are_never_edited(lines: list[str], pad_a: int, pad_b: int) -> None:
    body = "value = compute(x)"
    text = "\n".join([" " * pad_a + body, *lines, " " * pad_b + body + " "]) + "\n"
    assume(text.count(body) == 2)
    try:
        find_replacements(text, "  " + body + "   ", "gone", False, PATH)
    except InvalidInputError as exc:
        assert "times" in exc.message or "not found" in exc.message
    else:
        pytest.fail("a near miss with two candidates was applied")
