"""Stream a window of lines out of a text file: constant memory whatever the file's size."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from goat_jupyter.fileio import TextFormat
from goat_jupyter.text import cut_line

CHUNK_BYTES = 1 << 18
# Every byte except UTF-8 continuation bytes (0x80-0xBF): deleting them leaves one byte per extra byte.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b <= 0xBF)


@dataclass
class LineWindow:
    """The lines shown (already cut for display), the number of the first one, and the file's total."""

    first: int
    lines: list[str]
    total: int

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1


def utf8_char_count(data: bytes) -> int:
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))


class _LineHead:
    """The start of one line (enough to display it) and how many characters were dropped after it."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.keep = max_chars * 4 + 4  # UTF-8 needs at most 4 bytes per character
        self.head = bytearray()
        self.dropped_chars = 0
        self.complete = True
        self.ends_with_cr = False

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        room = self.keep - len(self.head)
        if len(piece) <= room:
            self.head += piece
        else:
            self.head += piece[:room]
            self.dropped_chars += utf8_char_count(piece[room:])
            self.complete = False
        self.ends_with_cr = piece.endswith(b"\r")

    def text(self) -> str:
        shown = self.head.decode("utf-8", errors="replace")
        if self.complete:
            # a CRLF line break leaves its CR at the end: it is not part of the line
            return cut_line(shown[:-1] if self.ends_with_cr else shown, self.max_chars)
        full_length = len(shown) + self.dropped_chars - (1 if self.ends_with_cr else 0)
        return cut_line(shown[: self.max_chars], self.max_chars, full_length=full_length)


@dataclass
class _WindowScan:
    """One pass over UTF-8 chunks: keeps lines first..last, counts every line."""

    first: int
    last: int
    max_line_chars: int
    budget: int  # stop collecting once the shown text reaches this many characters
    line_no: int = 1
    lines: list[str] = field(default_factory=lambda: list[str]())
    used: int = 0
    ended_with_newline: bool = True
    current: _LineHead | None = None

    def feed(self, chunk: bytes) -> None:
        self.ended_with_newline = chunk.endswith(b"\n")
        newlines = chunk.count(b"\n")
        if self.line_no + newlines < self.first or self.line_no > self.last:
            self.line_no += newlines  # the whole chunk lies outside the window
            return
        self._walk(chunk)

    def _walk(self, chunk: bytes) -> None:
        start = 0
        while start < len(chunk):
            if self.line_no > self.last:
                self.line_no += chunk.count(b"\n", start)
                return
            end = chunk.find(b"\n", start)
            if self.line_no >= self.first:
                self._head().add(chunk[start : len(chunk) if end < 0 else end])
            if end < 0:
                return
            if self.line_no >= self.first:
                self._keep_line()
            self.line_no += 1
            start = end + 1

    def _head(self) -> _LineHead:
        if self.current is None:
            self.current = _LineHead(self.max_line_chars)
        return self.current

    def _keep_line(self) -> None:
        text = self._head().text()
        self.current = None
        self.lines.append(text)
        self.used += len(text) + 1
        if self.used >= self.budget:
            self.last = self.line_no

    def finish(self) -> LineWindow:
        total = self.line_no - 1 if self.ended_with_newline else self.line_no
        if not self.ended_with_newline and self.first <= self.line_no <= self.last:
            self._keep_line()  # the final line has no line break
        return LineWindow(self.first, self.lines, total)


def utf8_chunks(path: Path, fmt: TextFormat) -> Iterator[bytes]:
    """The file's content after its BOM as UTF-8 chunks (UTF-16/32 files are transcoded on the fly)."""
    with path.open("rb") as handle:
        handle.seek(len(fmt.bom))
        if fmt.encoding == "utf-8":
            while chunk := handle.read(CHUNK_BYTES):
                yield chunk
            return
        reader = io.TextIOWrapper(handle, encoding=fmt.encoding, errors="replace", newline="")
        while text := reader.read(CHUNK_BYTES // 4):
            yield text.encode("utf-8", errors="surrogatepass")


def read_window(
    path: Path, fmt: TextFormat, *, first: int, limit: int, max_line_chars: int, budget: int
) -> LineWindow:
    """Lines first..first+limit-1 (1-based) of `path`, reading it once without holding it in memory."""
    scan = _WindowScan(first=first, last=first + limit - 1, max_line_chars=max_line_chars, budget=budget)
    for chunk in utf8_chunks(path, fmt):
        scan.feed(chunk)
    return scan.finish()
