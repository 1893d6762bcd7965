"""Keep tool output within what the model should read: head and tail, with a note between."""

from __future__ import annotations


def cut_middle(text: str, limit: int) -> str:
    """Keep the first and last part of `text` so it fits in about `limit` characters."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    omitted_lines = text.count("\n", head, len(text) - tail)
    note = f"\n\n... [{omitted} characters ({omitted_lines} lines) omitted] ...\n\n"
    return text[:head] + note + text[len(text) - tail :]


def cut_line(line: str, limit: int, *, full_length: int | None = None) -> str:
    """Cut one long line with a marker; `full_length` is its real length when `line` is only its start."""
    length = len(line) if full_length is None else full_length
    if length <= limit:
        return line
    return line[:limit] + f"... [line cut, {length - limit} more characters]"
