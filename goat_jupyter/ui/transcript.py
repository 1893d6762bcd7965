"""A notebook as the text a terminal shows: cells, goat's transcript lines (one per tool call), the
model's Markdown as written, streams and plain-text reprs; never HTML."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.replay.recording import RECORDING_MIME
from goat_jupyter.ui.safe.controls import strip_controls

TEXT_TYPES = ("text/plain", "text/markdown")


@dataclass(frozen=True)
class Piece:
    """One thing the transcript prints; lines (tool calls, notices, footers) stack without a gap."""

    text: str
    line: bool = False


def notebook_transcript(notebook: Mapping[str, Any]) -> str:
    """The whole notebook, blocks apart by one blank line."""
    pieces = [piece for cell in _items(notebook.get("cells")) for piece in cell_pieces(cell)]
    return join_pieces(pieces)


def join_pieces(pieces: list[Piece]) -> str:
    lines: list[str] = []
    previous: Piece | None = None
    for piece in pieces:
        if previous is not None and not (piece.line and previous.line):
            lines.append("")
        lines.append(piece.text)
        previous = piece
    return "\n".join(lines) + "\n" if lines else ""


def cell_pieces(cell: Mapping[str, Any]) -> Iterator[Piece]:
    source = _text(cell.get("source")).strip("\n")
    if cell.get("cell_type") != "code":
        yield from _pieces(source)
        return
    if source.strip():
        yield from _pieces(input_text(source, cell.get("execution_count")))
    for output in _items(cell.get("outputs")):
        yield from output_pieces(output)


def input_text(source: str, count: object) -> str:
    """`In [2]: %%goat` and `   ...: the prompt`, as IPython's console shows a cell."""
    prompt = f"In [{count if isinstance(count, int) else ' '}]: "
    more = " " * (len(prompt) - 5) + "...: "
    first, *rest = source.splitlines()
    return "\n".join([prompt + first, *(more + line for line in rest)])


def output_pieces(output: Mapping[str, Any]) -> list[Piece]:
    kind = output.get("output_type")
    if kind == "stream":
        return _pieces(_text(output.get("text")))
    if kind == "error":
        traceback = "\n".join(_strings(output.get("traceback")))
        return _pieces(traceback or f"{output.get('ename')}: {output.get('evalue')}")
    data = _mapping(output.get("data"))
    if RECORDING_MIME in data:  # the cell's recording, for replay: not part of what happened
        return []
    goat = _mapping(_mapping(output.get("metadata")).get("goat"))
    line = goat.get("transcript")
    if isinstance(line, str):  # one of goat's own blocks: its transcript form, "" when it has none
        return _pieces(line, line="\n" not in line.strip() and "text/markdown" not in data)
    return _pieces(data_text(data))


def data_text(data: Mapping[str, Any]) -> str:
    """A display's plain form: text/plain or Markdown, else the HTML's text, else what it is."""
    for mime in TEXT_TYPES:
        if mime in data:
            return _text(data[mime])
    if "text/html" in data:
        from bs4 import BeautifulSoup

        return BeautifulSoup(_text(data["text/html"]), "html.parser").get_text()
    return " ".join(f"[{mime}]" for mime in data)


def _pieces(text: str, *, line: bool = False) -> list[Piece]:
    """The text without control characters (a terminal would obey them: clipboard writes, a cleared
    screen, fake colours), trailing spaces, outer blank lines or runs of blank lines; none if blank."""
    rows: list[str] = []
    for row in strip_controls(text).split("\n"):
        row = row.rstrip()
        if row or (rows and rows[-1]):
            rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    return [Piece("\n".join(rows), line)] if rows else []


def _strings(value: object) -> list[str]:
    return [str(item) for item in cast(list[object], value)] if isinstance(value, list) else []


def _text(value: object) -> str:
    """nbformat's multiline strings: a string or a list of lines."""
    if isinstance(value, list):
        return "".join(str(part) for part in cast(list[object], value))
    return value if isinstance(value, str) else ""


def _items(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [cast(Mapping[str, Any], item) for item in cast(list[object], value) if isinstance(item, Mapping)]


def _mapping(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}
