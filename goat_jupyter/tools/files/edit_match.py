"""Where an Edit applies: the exact match first, then a short cascade of safe fallbacks for near-misses
(whitespace, indentation, curly quotes), each used only when it finds exactly one place (or replace_all)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Span = tuple[int, int]
Finder = Callable[[str, str], list[Span]]

CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
_STRAIGHTEN = str.maketrans(CURLY)


@dataclass(frozen=True)
class Replacement:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Matches:
    """The places one strategy found; `strategy` is "exact" or the fallback's name."""

    strategy: str
    spans: list[Span]


@dataclass(frozen=True)
class _Lines:
    """A text's lines with where each starts and ends (before its line break)."""

    lines: list[str]
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Lines:
        lines = text.split("\n")
        starts: list[int] = []
        offset = 0
        for line in lines:
            starts.append(offset)
            offset += len(line) + 1
        return cls(lines, starts)

    def end(self, index: int) -> int:
        return self.starts[index] + len(self.lines[index])


def exact_spans(text: str, old: str) -> list[Span]:
    """Non-overlapping exact occurrences, left to right (what str.replace would change)."""
    spans: list[Span] = []
    at = text.find(old)
    while at >= 0:
        spans.append((at, at + len(old)))
        at = text.find(old, at + len(old))
    return spans


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def base_indent(lines: list[str]) -> str:
    """The smallest indentation among the non-blank lines."""
    indents = [indent_of(line) for line in lines if line.strip()]
    return min(indents, key=len) if indents else ""


def _dedented(lines: list[str]) -> list[str]:
    cut = len(base_indent(lines))
    return [line[cut:].rstrip() if line.strip() else "" for line in lines]


def _block_finder(
    line_key: Callable[[str], str], block_key: Callable[[list[str]], list[str]] | None = None
) -> Finder:
    """Whole-line blocks of the file whose lines' keys equal old_string's (and, with `block_key`, whose
    block keys are equal too). Keys are computed once per line, so a miss costs one pass."""

    def find(text: str, old: str) -> list[Span]:
        wanted_lines, keeps_newline = split_old(old)
        wanted = [line_key(line) for line in wanted_lines]
        anchor = next((i for i, key in enumerate(wanted) if key.strip()), None)
        if anchor is None:
            return []
        lines = _Lines.of(text)
        keys = [line_key(line) for line in lines.lines]
        wanted_block = block_key(wanted_lines) if block_key else None
        size, spans, index = len(wanted), list[Span](), 0
        while index + size <= len(keys):
            if (
                keys[index + anchor] == wanted[anchor]
                and keys[index : index + size] == wanted
                and (block_key is None or block_key(lines.lines[index : index + size]) == wanted_block)
            ):
                end = lines.end(index + size - 1)
                spans.append((lines.starts[index], end + 1 if keeps_newline and end < len(text) else end))
                index += size
            else:
                index += 1
        return spans

    return find


def split_old(old: str) -> tuple[list[str], bool]:
    """old_string's lines, and whether it ended with a line break (dropped from the lines)."""
    keeps_newline = old.endswith("\n")
    return (old[:-1] if keeps_newline else old).split("\n"), keeps_newline


def whitespace_spans(text: str, old: str) -> list[Span]:
    """Runs of whitespace (line breaks included) count as equal; the words must match exactly."""
    words = old.split()
    if not words:
        return []
    pattern = re.compile(r"\s+".join(map(re.escape, words)))
    return [match.span() for match in pattern.finditer(text)]


FALLBACKS: tuple[tuple[str, Finder], ...] = (
    ("trailing whitespace ignored", _block_finder(str.rstrip)),
    ("indentation-flexible", _block_finder(str.strip, _dedented)),
    ("line-trimmed", _block_finder(str.strip)),
    ("whitespace-normalised", whitespace_spans),
)


def find_matches(text: str, old: str) -> Matches | None:
    """The first strategy that finds old_string at all: exact, the fallbacks, then all of them again
    with curly quotes read as straight ones (same length, so places carry over)."""
    spans = exact_spans(text, old)
    if spans:
        return Matches("exact", spans)
    found = _cascade(text, old)
    if found is not None:
        return found
    plain_text, plain_old = text.translate(_STRAIGHTEN), old.translate(_STRAIGHTEN)
    if (plain_text, plain_old) == (text, old):
        return None
    spans = exact_spans(plain_text, plain_old)
    if spans:
        return Matches("curly/straight quotes", spans)
    found = _cascade(plain_text, plain_old)
    return None if found is None else Matches(f"curly/straight quotes, {found.strategy}", found.spans)


def look_alikes(text: str, old: str) -> list[Span]:
    """How many places match old_string once whitespace and quote style are ignored: a fallback is
    trusted only when no other place looks like the one it picked."""
    return whitespace_spans(text.translate(_STRAIGHTEN), old.translate(_STRAIGHTEN))


def _cascade(text: str, old: str) -> Matches | None:
    for name, finder in FALLBACKS:
        spans = finder(text, old)
        if spans:
            return Matches(name, spans)
    return None


def adapt_new(text: str, span: Span, old: str, new: str, strategy: str) -> str:
    """new_string fitted to the place found: re-indented like the file, quotes in the file's style."""
    if strategy == "exact":
        return new
    region = text[span[0] : span[1]]
    if strategy.endswith("whitespace-normalised"):
        new = _strip_like(old, new)
    elif "whitespace" in strategy or "indentation" in strategy or "trimmed" in strategy:
        new = reindent(new, split_old(old)[0], region.split("\n"))
    return restyle_quotes(new, region) if strategy.startswith("curly") else new


def _strip_like(old: str, new: str) -> str:
    """The whitespace match leaves old_string's outer whitespace out of the span: drop it from new too."""
    lead, trail = indent_of(old), old[len(old.rstrip()) :]
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if trail and new.endswith(trail):
        new = new[: len(new) - len(trail)]
    return new


def reindent(new: str, old_lines: list[str], file_lines: list[str]) -> str:
    """new_string indented the way the file indents what old_string indented: each indentation of
    old_string maps to the file's on the matching line; others move by the base difference."""
    mapping: dict[str, str] = {}
    for mine, theirs in zip(old_lines, file_lines, strict=False):
        if mine.strip():
            mapping.setdefault(indent_of(mine), indent_of(theirs))
    old_base, file_base = base_indent(old_lines), base_indent(file_lines)
    if all(key == value for key, value in mapping.items()) and old_base == file_base:
        return new
    return "\n".join(_reindent_line(line, mapping, old_base, file_base) for line in new.split("\n"))


def _reindent_line(line: str, mapping: dict[str, str], old_base: str, file_base: str) -> str:
    if not line.strip():
        return line
    indent = indent_of(line)
    if indent in mapping:
        return mapping[indent] + line[len(indent) :]
    if line.startswith(old_base):
        return file_base + line[len(old_base) :]
    return line


def restyle_quotes(new: str, region: str) -> str:
    """Straight quotes in new_string become curly where the file's text uses curly ones, and back."""
    if not any(ch in CURLY for ch in region):
        return new.translate(_STRAIGHTEN)
    out: list[str] = []
    for index, ch in enumerate(new):
        before = new[index - 1] if index else " "
        after = new[index + 1] if index + 1 < len(new) else " "
        out.append(_curly(ch, before, after, region))
    return "".join(out)


def _curly(ch: str, before: str, after: str, region: str) -> str:
    opening = before.isspace() or before in "([{<"
    if ch == '"' and ("\u201c" in region or "\u201d" in region):
        return "\u201c" if opening else "\u201d"
    if ch == "'" and ("\u2018" in region or "\u2019" in region):
        if before.isalnum() and after.isalnum():
            return "\u2019"  # an apostrophe
        return "\u2018" if opening else "\u2019"
    return ch


def plan(text: str, matches: Matches, old: str, new: str, replace_all: bool) -> list[Replacement]:
    """The replacements to make (the first place only, unless replace_all)."""
    spans = matches.spans if replace_all else matches.spans[:1]
    return [
        Replacement(*_whole_line(text, span, new), adapt_new(text, span, old, new, matches.strategy))
        for span in spans
    ]


def _whole_line(text: str, span: Span, new: str) -> Span:
    """Deleting a whole line (empty new_string) takes its line break with it."""
    start, end = span
    if new == "" and (start == 0 or text[start - 1] == "\n") and text[end : end + 1] == "\n":
        return start, end + 1
    return start, end


def apply(text: str, replacements: list[Replacement]) -> str:
    parts: list[str] = []
    last = 0
    for item in replacements:
        parts += [text[last : item.start], item.text]
        last = item.end
    parts.append(text[last:])
    return "".join(parts)
