"""A project file's limits only lower the user's: a cloned repository cannot lift a budget.

Each limit (config/model.py's Scope.LIMIT: turns, budgets, tokens, retries, timeouts, memory) in a
workspace's `.goat/settings.json` applies when it is at most the user's own value (defaults < the
user's files); `null` changes nothing, and a larger value (or `null` where the user has a limit) is
ignored and named in one sentence. Folder trust does not change this.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from goat_jupyter.config.model import LIMIT, Settings, fields_of

SOURCE = ".goat/settings.json"


def lowered_limits(project: dict[str, Any], user: Settings) -> tuple[dict[str, Any], list[str]]:
    """`project` (resolved) without the limits it would raise or remove, and a note for each one."""
    kept = dict(project)
    notes: list[str] = []
    for name in [n for n in fields_of(LIMIT) if n in kept]:
        ours, theirs = _number(getattr(user, name)), _checked(name, kept[name])
        if isinstance(theirs, _Invalid) or _lowers(theirs, ours):
            continue  # an invalid value fails the whole file later, as any invalid value does
        del kept[name]
        if ours is not None:
            notes.append(_note(name, theirs, ours))
    return kept, notes


class _Invalid:
    """A value the setting refuses (the file is then skipped whole)."""


def _checked(name: str, value: object) -> float | _Invalid | None:
    """The value as the setting reads it (`"1000"` is 1000), or _Invalid."""
    probe = Settings()
    try:
        setattr(probe, name, value)
    except ValidationError:
        return _Invalid()
    return _number(getattr(probe, name))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _lowers(theirs: float | None, ours: float | None) -> bool:
    """Whether the project's value is a limit at most the user's (None: no limit / no change)."""
    return theirs is not None and (ours is None or theirs <= ours)


def _note(name: str, theirs: float | None, ours: float) -> str:
    wanted = "null (no limit)" if theirs is None else f"{theirs:g}"
    return (
        f"{SOURCE} sets {name} = {wanted}, above your own {ours:g}: ignored "
        "(a project file may only lower your limits)."
    )
