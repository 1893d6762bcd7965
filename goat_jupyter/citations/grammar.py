"""Citations in the model's answer: `[cell 7, out 1]` (7 is the number in the cell's `[7]:` prompt, its
execution count; 1 is its first output, as Read lists them) or `[cell 7]` (any output of the cell),
each with the value it vouches for: the nearest number or quoted string before it in its clause, else
the first one after it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from goat_jupyter.citations.values import NUMBER_PATTERN, Quoted, Value, number_of, parse_number

Span = tuple[int, int]
# A mark the model wrote itself (`✓`, `⚠ ...`) is part of the citation: goat's verdict replaces it.
CITATION = re.compile(
    r"\[[ \t]*cell[ \t]+(?P<cell>\d{1,9})(?:[ \t]*,[ \t]*out(?:put)?[ \t]+(?P<out>\d{1,4}))?"
    r"(?P<claim>[ \t]*(?:✓|✔|⚠)[^\]\n]{0,200})?[ \t]*\]",
    re.IGNORECASE,
)
# Where a clause ends: a line break, a semicolon, a sentence's end (punctuation then a space).
_CLAUSE_END = re.compile(r"\n|;|[.!?](?=\s)")
_VALUE = re.compile(
    r"(?P<quoted>\"[^\"\n]{1,300}\"|“[^”\n]{1,300}”)|`(?P<code>[^`\n]{1,300})`|" + NUMBER_PATTERN
)
# Numbers that name something rather than state a value: a cell, an output, a list item.
_NAMING = re.compile(r"\b(?:cells?|out|outputs?)[ \t]+$", re.IGNORECASE)
_LIST_MARK = re.compile(r"[.)][ \t]")


@dataclass(frozen=True)
class Citation:
    """One citation: where it is in the answer, what it names and the value it vouches for."""

    start: int
    end: int
    cell: int
    out: int | None  # 1-based; None: any output of the cell
    value: Value | None

    @property
    def label(self) -> str:
        """The citation as goat writes it back: `cell 7, out 1` or `cell 7`."""
        return f"cell {self.cell}" + (f", out {self.out}" if self.out is not None else "")


def find_citations(text: str, skip: Sequence[Span] = ()) -> list[Citation]:
    """Every citation in `text` outside the `skip` ranges (code), in order, with its value."""
    matches = [m for m in CITATION.finditer(text) if not _inside(m.start(), m.end(), skip)]
    found: list[Citation] = []
    for index, match in enumerate(matches):
        floor = matches[index - 1].end() if index else 0
        ceiling = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        out = match.group("out")
        value = _value_near(text, match.start(), match.end(), floor, ceiling)
        found.append(Citation(match.start(), match.end(), int(match.group("cell")), _out(out), value))
    return found


def _out(text: str | None) -> int | None:
    return int(text) if text is not None else None


def _inside(start: int, end: int, spans: Sequence[Span]) -> bool:
    return any(start < span_end and span_start < end for span_start, span_end in spans)


def _value_near(text: str, start: int, end: int, floor: int, ceiling: int) -> Value | None:
    """The last value in the clause before the citation, else the first one after it."""
    before = _clause_start(text, start, floor)
    after = _clause_end(text, end, ceiling)
    earlier = [value for _, value in values_in(text, before, start)]
    if earlier:
        return earlier[-1]
    return next((value for _, value in values_in(text, end, after)), None)


def _clause_start(text: str, start: int, floor: int) -> int:
    ends = [m.end() for m in _CLAUSE_END.finditer(text, floor, start)]
    return ends[-1] if ends else floor


def _clause_end(text: str, end: int, ceiling: int) -> int:
    found = _CLAUSE_END.search(text, end, ceiling)
    return found.start() if found else ceiling


def values_in(text: str, start: int, end: int) -> Iterator[tuple[int, Value]]:
    """The values written in text[start:end], each with where it starts: quoted strings, code that is
    one number or a word, numbers."""
    for match in _VALUE.finditer(text, start, end):
        if match.group("quoted"):
            yield match.start(), Quoted(match.group("quoted")[1:-1])
        elif (code := match.group("code")) is not None:
            yield match.start(), parse_number(code) or Quoted(code)
        elif not _names_something(text, match):
            yield match.start(), number_of(match)


def _names_something(text: str, match: re.Match[str]) -> bool:
    """`cell 7`, `out 2`, or a list item's number at the start of a line."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[line_start : match.start()]
    if _NAMING.search(before[-12:]):
        return True
    return not before.strip() and bool(_LIST_MARK.match(text, match.end()))
