"""The few words after a tool call's name: what it worked on and what came back, for people."""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any, cast

from goat_jupyter.ui.text import first_line, shorten

if TYPE_CHECKING:  # importing goat_jupyter.tools loads every tool; the renderer must stay cheap
    from goat_jupyter.tools.base import ToolOutput

SUMMARY_CHARS = 80


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def relative(text: str, base: str) -> str:
    """`text` as people read it: paths in the workspace relative to it, others under home with `~`.

    A path counts only where one starts (not inside a longer path): `/w/a` in `/data/w/a` stays."""
    if base and base != os.sep:
        text = _prefix_pattern(base).sub("", text)
    home = os.path.expanduser("~")
    if home and home != os.sep:
        text = _prefix_pattern(home).sub("~" + os.sep, text)
    return text


@functools.lru_cache(maxsize=16)
def _prefix_pattern(folder: str) -> re.Pattern[str]:
    prefix = re.escape(folder.rstrip(os.sep) + os.sep)
    return re.compile(rf"(?<![\w.~/\\-]){prefix}")


def result_summary(name: str, args: dict[str, Any], output: ToolOutput) -> str:
    """`49 lines`, `12 matches in 3 files`, `exit 0, 6 lines`, `+3 −1`; errors: their first line."""
    if output.summary:
        return output.summary
    if output.is_error:
        return shorten(first_line(output.content).removeprefix("Error: "), SUMMARY_CHARS)
    meta = output.metadata
    found = _by_metadata(name, meta)
    if found:
        return found
    if name == "Bash":
        return f"exit 0, {plural(len(output.content.splitlines()), 'line')}"
    lines = len(output.content.splitlines())
    return plural(lines, "line") if lines > 1 else shorten(first_line(output.content), SUMMARY_CHARS)


def _by_metadata(name: str, meta: dict[str, Any]) -> str:
    diff = meta.get("diff")
    if isinstance(diff, str) and diff:
        return diff_counts(diff)
    if name == "Write" and isinstance(meta.get("lines"), int):
        verb = "created" if meta.get("created") else "overwrote"
        return f"{verb}, {plural(cast(int, meta['lines']), 'line')}"
    if name == "Grep" and isinstance(meta.get("total"), int):
        total, files = cast(int, meta["total"]), meta.get("files")
        if meta.get("mode") == "content" and isinstance(files, int):
            return f"{plural(total, 'match')} in {plural(files, 'file')}".replace("matchs", "matches")
        return plural(total, "file") if meta.get("mode") == "files_with_matches" else plural(total, "result")
    if name == "Glob" and isinstance(meta.get("count"), int):
        return plural(cast(int, meta["count"]), "file")
    if name == "NotebookEdit" and isinstance(meta.get("edit_mode"), str):
        number = meta.get("cell_number")
        return f"{meta['edit_mode']} cell {number if isinstance(number, int) else meta.get('cell_id', '')}".strip()
    return ""


def diff_counts(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return f"+{added} −{removed}"
