"""Pure-Python Grep backend for machines without rg: same walk rules and the same output as rg.

Regexes are Python's `re`, which agrees with ripgrep's syntax for everyday patterns (not for
`\\p{..}` classes or rg-only flags). Binary files (a NUL byte) are skipped, as rg skips them.
"""

from __future__ import annotations

import asyncio
import bisect
import re
from pathlib import Path

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.tools.search.grep_backend import (
    LONG_LINE_MARK,
    MAX_COLUMNS,
    FileHits,
    GrepQuery,
    SearchResult,
)
from goat_jupyter.tools.search.ignore_walk import FILE_TYPES, searchable_files

# Multiline counting: rg counts matches (not lines) when the pattern can match a newline. Python
# cannot tell that from a compiled regex, so these tokens stand in for it.
_CAN_MATCH_NEWLINE = re.compile(r"\\n|\\s|\\W|\\D|\\S|\[\^|\.|\\x0[aA]|\n")


class PythonGrepBackend:
    name = "python"

    async def search(self, query: GrepQuery) -> SearchResult:
        regex = compile_pattern(query)
        type_globs = _type_globs(query.file_type)
        return await asyncio.to_thread(_search_all, query, regex, type_globs)


def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    if not query.multiline and ("\n" in query.pattern or "\\n" in query.pattern):
        raise InvalidInputError(
            "Invalid regular expression: a newline can only match with multiline=true (rg's rule too)."
        )
    flags = re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0)
    if query.multiline:
        flags |= re.DOTALL
    try:
        return re.compile(query.pattern, flags)
    except re.error as exc:
        raise InvalidInputError(f"Invalid regular expression: {exc}") from None


def _type_globs(file_type: str | None) -> tuple[str, ...]:
    if file_type is None:
        return ()
    if file_type not in FILE_TYPES:
        known = ", ".join(sorted(FILE_TYPES))
        raise InvalidInputError(
            f"Invalid search filter: unrecognized file type {file_type!r} (known: {known})."
        )
    return FILE_TYPES[file_type]


def _search_all(query: GrepQuery, regex: re.Pattern[str], type_globs: tuple[str, ...]) -> SearchResult:
    hits: list[FileHits] = []
    for path in searchable_files(query.root, query.globs, type_globs):
        found = search_file(path, query, regex)
        if found is not None:
            hits.append(found)
    return SearchResult(hits)


def search_file(path: Path, query: GrepQuery, regex: re.Pattern[str]) -> FileHits | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if query.multiline:
        matched, count = _multiline_matches(text, lines, regex)
    else:
        matched = [i for i, line in enumerate(lines) if regex.search(line)]
        count = len(matched)
    if not matched:
        return None
    hits = FileHits(str(path), count=count)
    if query.mode == "content":
        hits.body = b"\n".join(render_lines(lines, matched, query.before, query.after))
    return hits


def _multiline_matches(text: str, lines: list[str], regex: re.Pattern[str]) -> tuple[list[int], int]:
    """Indices of every line a match touches, and rg's count for it."""
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    touched: set[int] = set()
    matches = list(regex.finditer(text))
    for match in matches:
        first = _line_of(starts, match.start())
        last = _line_of(starts, max(match.start(), match.end() - 1))
        touched.update(range(first, last + 1))
    count = len(matches)
    if not _CAN_MATCH_NEWLINE.search(regex.pattern):
        count = len(touched)
    return sorted(touched), count


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


def render_lines(lines: list[str], matched: list[int], before: int, after: int) -> list[bytes]:
    """rg's content lines for one file: `N:text` matches, `N-text` context, `--` between gaps."""
    wanted: set[int] = set()
    for index in matched:
        wanted.update(range(max(0, index - before), min(len(lines), index + after + 1)))
    is_match = set(matched)
    out: list[bytes] = []
    previous = -2
    for index in sorted(wanted):
        if out and index != previous + 1:
            out.append(b"--")
        mark = ":" if index in is_match else "-"
        out.append(f"{index + 1}{mark}".encode() + _column_cut(lines[index]))
        previous = index
    return out


def _column_cut(line: str) -> bytes:
    """rg --max-columns-preview: a line over MAX_COLUMNS bytes keeps its first MAX_COLUMNS characters."""
    raw = line.encode("utf-8", "surrogateescape")
    if len(raw) <= MAX_COLUMNS:
        return raw
    return line[:MAX_COLUMNS].encode("utf-8", "surrogateescape") + LONG_LINE_MARK.encode()
