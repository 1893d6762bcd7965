"""Cell tags the agent must respect (the user's locks) and the cell facts rules can name.

`goat:locked` / `goat:ask`: editing (replace, delete) or running that cell asks the user in every
mode, bypassPermissions included, and only "allow once" is offered. `goat:no-edit`: NotebookEdit
never replaces or deletes it; `goat:no-run`: RunCell never runs it. Tags compare without case or
spaces (`Goat: Locked` is `goat:locked`), after NFKC normalisation. Rules name cells by tag: `RunCell(tag:train)`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

CellAction = Literal["run", "edit"]
LOCK_TAGS = ("goat:locked", "goat:ask")
REFUSE_TAGS: dict[CellAction, str] = {"run": "goat:no-run", "edit": "goat:no-edit"}
TAG_RULE_PREFIX = "tag:"
_HOW_TO_CHANGE = (
    "Only the user can change that: in JupyterLab, the cell toolbar's 'Lock for goat' toggle or the "
    "cell's tags in the property inspector."
)


def tag_key(tag: str) -> str:
    """How tags compare: case, whitespace and compatibility forms (fullwidth `：`) do not count."""
    return "".join(unicodedata.normalize("NFKC", tag).split()).casefold()


def tags_of(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The cell's tags as written (nbformat `metadata.tags`; anything else there is ignored)."""
    raw: object = metadata.get("tags")
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list | tuple):
        return ()
    return tuple(t for t in cast("Iterable[object]", raw) if isinstance(t, str))


@dataclass(frozen=True)
class CellFacts:
    """The cell a RunCell / NotebookEdit call acts on, as looked up once before the decision."""

    label: str  # how results name it: "cell 3 (id ab12)"
    source: str
    tags: tuple[str, ...] = ()
    id: str = ""

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(tag_key(t) for t in self.tags)

    @property
    def locks(self) -> frozenset[str]:
        """The lock tags it carries (those that always ask)."""
        return self.keys & frozenset(LOCK_TAGS)


def refusal(action: CellAction, cell: CellFacts) -> str | None:
    """Why the agent may never do `action` to this cell; None when it may (subject to permissions)."""
    tag = REFUSE_TAGS[action]
    if tag not in cell.keys:
        return None
    verb = "run" if action == "run" else "edit or delete"
    return (
        f"{cell.label} is tagged {tag}: the user does not let the agent {verb} it, in any permission "
        f"mode. Do not retry; tell the user what you wanted to do and let them do it. {_HOW_TO_CHANGE}"
    )


def lock_guard(action: CellAction, cell: CellFacts) -> str | None:
    """The always-ask reason for a locked cell; None when it carries no lock tag."""
    if not cell.locks:
        return None
    tag = sorted(cell.locks)[0]
    verb = "runs" if action == "run" else "changes"
    return (
        f"This call {verb} {cell.label}, which the user tagged {tag}: only the user may approve it, "
        f"once, in every permission mode. To let the agent act on it without asking, remove the tag. "
        f"{_HOW_TO_CHANGE}"
    )


def tag_rule_key(specifier: str) -> str | None:
    """The tag a rule specifier names (`tag:train` -> `train`); None for other specifiers."""
    text = specifier.strip()
    if text[: len(TAG_RULE_PREFIX)].casefold() != TAG_RULE_PREFIX:
        return None
    return tag_key(text[len(TAG_RULE_PREFIX) :])
