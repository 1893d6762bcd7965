"""Read deny rules and credential stores applied to search results: a file a rule denies, or one in
a credential store (~/.ssh, ~/.netrc, goat's key store...), never shows in Grep or Glob when the
search starts in a folder above it. A search inside a store (which asked the user) shows its files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from goat_jupyter.config.secret_stores import Stores
from goat_jupyter.tools.base import ToolContext

Item = TypeVar("Item")


@dataclass
class Hidden:
    count: int = 0
    rule: str | None = None  # the rule that hid the first one
    secrets: int = 0

    def note(self) -> str:
        notes: list[str] = []
        if self.count:
            notes.append(f"({_files(self.count)} hidden by the rule {self.rule} in permissions.deny.)")
        if self.secrets:
            notes.append(
                f"({_files(self.secrets)} in credential stores (such as ~/.ssh or ~/.netrc) left out: "
                "they are read only when asked for by path, with the user's approval.)"
            )
        return "\n".join(notes)


def _files(count: int) -> str:
    return f"{count} matching {'file' if count == 1 else 'files'}"


def drop_denied(
    items: list[Item], path_of: Callable[[Item], str], ctx: ToolContext, root: Path
) -> tuple[list[Item], Hidden]:
    checker = ctx.read_deny_checker()
    stores = Stores()
    searched = stores.find(root)
    hidden = Hidden()
    kept: list[Item] = []
    for item in items:
        path = Path(path_of(item))
        rule = checker(path) if checker is not None else None
        if rule is not None:
            hidden.count += 1
            hidden.rule = hidden.rule or rule
        elif (store := stores.find(path)) is not None and store != searched:
            hidden.secrets += 1
        else:
            kept.append(item)
    return kept, hidden


def with_note(text: str, hidden: Hidden) -> str:
    note = hidden.note()
    return f"{text}\n{note}" if note else text
