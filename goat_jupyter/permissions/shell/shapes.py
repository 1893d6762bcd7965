"""Whether two patterns can match the same text: a command with words only known at run time,
and a rule. Both are token sequences: a character, or None for any text (a `*`)."""

from __future__ import annotations

Tokens = tuple[str | None, ...]


def overlaps(left: Tokens, right: Tokens) -> bool:
    """Whether some text matches both patterns (each None matches any text, spaces included)."""
    seen: set[tuple[int, int]] = set()
    stack = [(0, 0)]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        if state == (len(left), len(right)):
            return True
        stack.extend(_steps(left, right, *state))
    return False


def _steps(left: Tokens, right: Tokens, i: int, j: int) -> list[tuple[int, int]]:
    """The states one step on: a wildcard ends or takes the other side's next token; characters pair."""
    more_left, more_right = i < len(left), j < len(right)
    steps: list[tuple[int, int]] = []
    if more_left and left[i] is None:
        steps += [(i + 1, j)] + ([(i, j + 1)] if more_right else [])
    if more_right and right[j] is None:
        steps += [(i, j + 1)] + ([(i + 1, j)] if more_left else [])
    if more_left and more_right and left[i] is not None and left[i] == right[j]:
        steps.append((i + 1, j + 1))
    return steps
