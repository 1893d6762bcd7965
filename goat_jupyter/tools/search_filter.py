"""Read deny rules applied to search results: a file a rule denies never shows in Grep or Glob,
also when the search starts in a folder above it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from goat_jupyter.tools.base import ToolContext

Item = TypeVar("Item")


@dataclass
class Hidden:
    count: int = 0
    rule: str | None = None  # the rule that hid the first one

    def note(self) -> str:
        if not self.count:
            return ""
        files = "file" if self.count == 1 else "files"
        return f"({self.count} matching {files} hidden by the rule {self.rule} in permissions.deny.)"


def drop_denied(
    items: list[Item], path_of: Callable[[Item], str], ctx: ToolContext
) -> tuple[list[Item], Hidden]:
    checker = ctx.read_deny_checker()
    hidden = Hidden()
    if checker is None:
        return items, hidden
    kept: list[Item] = []
    for item in items:
        rule = checker(Path(path_of(item)))
        if rule is None:
            kept.append(item)
        else:
            hidden.count += 1
            hidden.rule = hidden.rule or rule
    return kept, hidden


def with_note(text: str, hidden: Hidden) -> str:
    note = hidden.note()
    return f"{text}\n{note}" if note else text
