"""A bounded, readable summary of a live Python object for KernelInspect (duck-typed, no pandas import)."""

from __future__ import annotations

import reprlib
from collections.abc import Sized
from typing import Any

from goat_jupyter.tools.bounding import cut_middle

MAX_PART_CHARS = 8_000
SMALL_FRAME_ROWS = 20  # frames this short are shown whole (describe(), value_counts(), ...)
_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 100
_REPR.maxdict = 50
_REPR.maxstring = 2_000
_REPR.maxlong = 400
_REPR.maxother = MAX_PART_CHARS


def summarize(value: object) -> str:
    """DataFrame-likes: shape, dtypes, head; array-likes: shape and dtype; others: a cut repr."""
    name = type_name(value)
    try:
        if is_frame_like(value):
            return frame_summary(value, name)
        if is_array_like(value):
            return array_summary(value, name)
        return generic_summary(value, name)
    except Exception as exc:  # a broken __repr__ or property must not fail the inspection
        return f"{name} (its summary failed: {type(exc).__name__}: {exc})"


def type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def is_frame_like(value: object) -> bool:
    head = getattr(value, "head", None)
    return (
        hasattr(value, "shape")
        and hasattr(value, "dtypes")
        and callable(head)
        and not isinstance(value, type)
    )


def is_array_like(value: object) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def frame_summary(value: Any, name: str) -> str:
    shape = tuple(value.shape)
    rows = shape[0] if shape else 0
    shown, label = (value, "all rows") if rows <= SMALL_FRAME_ROWS else (value.head(), "head()")
    return f"{name} with shape {shape}\n\ndtypes:\n{as_text(value.dtypes)}\n\n{label}:\n{as_text(shown)}"


def array_summary(value: Any, name: str) -> str:
    return f"{name} with shape {tuple(value.shape)} and dtype {value.dtype}\n{cut(repr(value))}"


def generic_summary(value: object, name: str) -> str:
    size = ""
    if isinstance(value, Sized) and not isinstance(value, str | bytes):
        size = f" with {len(value)} items"
    elif isinstance(value, str | bytes):
        size = f" of length {len(value)}"
    return f"{name}{size}\n{cut(_REPR.repr(value))}"


def as_text(value: Any) -> str:
    """`to_string()` where the object has one (pandas), else its repr; cut either way."""
    to_string = getattr(value, "to_string", None)
    return cut(str(to_string()) if callable(to_string) else repr(value))


def cut(text: str) -> str:
    return cut_middle(text, MAX_PART_CHARS)
