"""Summaries of plain structures (dicts, lists, tuples, sets: the shape of the structure) and
exceptions (type, message, notes, causes, the last frames)."""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any, cast

from goat_jupyter.represent.bounded import bounded_repr, type_name
from goat_jupyter.represent.registry import summarizer

MAX_KEYS = 30  # keys (or distinct item kinds) listed per level
MAX_DEPTH = 3
MAX_FRAMES = 6
STRUCTURE_FROM_CHARS = 500  # shorter values are their own best description


def shape_of(value: Any, depth: int = 0) -> str:
    """`dict[3 keys]{a: list[100] of int, ...}`: the structure, not the values."""
    name = type_name(value)
    if isinstance(value, Mapping) and depth < MAX_DEPTH:
        items = list(cast(Mapping[Any, Any], value).items())
        inner = ", ".join(f"{bounded_repr(k)[:40]}: {shape_of(v, depth + 1)}" for k, v in items[:MAX_KEYS])
        more = f", ... {len(items) - MAX_KEYS} more" if len(items) > MAX_KEYS else ""
        return f"{name}[{len(items)} keys]{{{inner}{more}}}"
    if isinstance(value, list | tuple | set | frozenset) and depth < MAX_DEPTH:
        items = list(cast(Any, value))
        kinds = sorted({shape_of(v, depth + 1) for v in items[:1_000]})
        shown = " | ".join(kinds[:MAX_KEYS]) + (" | ..." if len(kinds) > MAX_KEYS else "")
        return f"{name}[{len(items)}]" + (f" of {shown}" if items else "")
    return name


def _container(value: Any) -> str:
    shown = bounded_repr(value)
    head = f"{type_name(value)} with {len(value)} items"
    if len(shown) < STRUCTURE_FROM_CHARS:
        return f"{head}\n{shown}"
    return f"{head}\nstructure: {shape_of(value)}\n\nvalue:\n{shown}"


for _kind in (dict, list, tuple, set, frozenset):
    summarizer(_kind, _builtin=True)(_container)


@summarizer(BaseException, _builtin=True)
def exception_summary(error: BaseException) -> str:
    lines = [f"{type_name(error)}: {error}"]
    notes: list[object] = getattr(error, "__notes__", None) or []
    lines += [f"note: {note}" for note in notes]
    frames = traceback.extract_tb(error.__traceback__)[-MAX_FRAMES:]
    if frames:
        lines.append("last frames:\n" + "".join(traceback.format_list(frames)).rstrip())
    cause = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if cause is not None:
        lines.append(f"caused by {type_name(cause)}: {cause}")
    return "\n".join(lines)
