"""Large outputs on demand: text over the budget is stored whole by content hash; the model gets its
head and tail with their line numbers, a summary and the file's path to Read or Grep by range."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from goat_jupyter.text import cut_middle, without_surrogates

HEAD_SHARE, TAIL_SHARE = 0.5, 0.25  # of the budget; the rest is the summary and the note
WRAP_AT = 2_000  # Read cuts longer lines: stored lines are split there so every character is readable


@dataclass(frozen=True)
class Spilled:
    """Where a large output was stored and the bounded text the model gets instead."""

    path: Path | None
    text: str


def spill(text: str, folder: Path, budget: int, summary: str = "") -> Spilled:
    """`text` itself when it fits `budget` characters; else stored under `folder` as `<sha256>.txt`."""
    if len(text) <= budget:
        return Spilled(None, text)
    text = wrapped(without_surrogates(text))
    try:
        path = _store(text, folder)
    except OSError as exc:  # a read-only workspace: cut as before, and say the rest is gone
        note = f"\n[output of {len(text):,} characters cut: it could not be stored ({exc.strerror or exc})]"
        return Spilled(None, cut_middle(text, budget) + note)
    return Spilled(path, _excerpt(text, path, budget, summary))


def wrapped(text: str) -> str:
    """`text` with each line longer than WRAP_AT split into WRAP_AT-character lines."""
    if all(len(line) <= WRAP_AT for line in text.split("\n")):
        return text
    pieces = (_split(line) for line in text.split("\n"))
    return "\n".join(piece for line in pieces for piece in line)


def _split(line: str) -> list[str]:
    return [line[i : i + WRAP_AT] for i in range(0, len(line), WRAP_AT)] or [""]


def _store(text: str, folder: Path) -> Path:
    data = text.encode("utf-8")
    path = folder / f"{hashlib.sha256(data).hexdigest()[:24]}.txt"
    if not path.exists():  # the same output twice is stored once
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        partial.write_bytes(data)
        partial.replace(path)
    return path


def _excerpt(text: str, path: Path, budget: int, summary: str) -> str:
    head = _line_end(text, int(budget * HEAD_SHARE))
    tail_start = _line_start(text, len(text) - int(budget * TAIL_SHARE))
    lines = text.count("\n") + 1
    head_lines, tail_first = text.count("\n", 0, head), text.count("\n", 0, tail_start) + 1
    note = (
        f"[output of {len(text):,} characters ({lines:,} lines) stored whole at {path}; shown: lines "
        f"1-{head_lines} and {tail_first}-{lines}. Read that file with offset/limit (lines) or Grep it "
        f"for the rest; lines over {WRAP_AT:,} characters are split there.]"
    )
    about = f"\n[summary]\n{cut_middle(summary, budget // 5)}" if summary else ""
    return f"{text[:head]}\n[... lines {head_lines + 1}-{tail_first - 1} not shown ...]\n{text[tail_start:]}\n{note}{about}"


def _line_end(text: str, at: int) -> int:
    """A cut at or before `at`, at a line's end when one is near (else mid-line)."""
    newline = text.rfind("\n", max(0, at - at // 5), at)
    return newline if newline > 0 else at


def _line_start(text: str, at: int) -> int:
    newline = text.find("\n", at, at + (len(text) - at) // 5 + 1)
    return newline + 1 if newline >= 0 else at
