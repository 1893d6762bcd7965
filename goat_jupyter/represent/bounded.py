"""Shared pieces: a bounded repr (reprlib, nested frames and arrays as one line), sizes, type names."""

from __future__ import annotations

import reprlib
from typing import Any

from goat_jupyter.represent.registry import resolve
from goat_jupyter.text import cut_middle

MAX_PART_CHARS = 8_000


def type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def is_instance(value: object, dotted: str) -> bool:
    """isinstance against a class named by its dotted name, without importing its module."""
    cls = resolve(dotted)
    return isinstance(cls, type) and isinstance(value, cls)


def cut(text: str, limit: int = MAX_PART_CHARS) -> str:
    return cut_middle(text, limit)


def size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    amount, unit = count / 1024, "KB"
    for bigger in ("MB", "GB", "TB"):
        if amount < 1024:
            break
        amount, unit = amount / 1024, bigger
    return f"{amount:.1f} {unit}"


def short(value: Any) -> str:
    """One line for a frame, series or array inside a container."""
    if is_instance(value, "numpy.ndarray"):
        return f"<ndarray shape={tuple(value.shape)} dtype={value.dtype}>"
    if is_instance(value, "pandas.Series"):
        return f"<Series {value.name!r} len={len(value)} dtype={value.dtype}>"
    columns = ", ".join(str(c) for c in list(value.columns[:8]))
    more = ", ..." if len(value.columns) > 8 else ""
    return f"<DataFrame shape={tuple(value.shape)} columns=[{columns}{more}]>"


class _Repr(reprlib.Repr):
    """reprlib with one-line summaries for frames and arrays nested in dicts and lists."""

    def repr_DataFrame(self, value: Any, level: int) -> str:  # noqa: N802 (reprlib's naming)
        return short(value) if is_instance(value, "pandas.DataFrame") else self.repr_instance(value, level)

    def repr_Series(self, value: Any, level: int) -> str:  # noqa: N802
        return short(value) if is_instance(value, "pandas.Series") else self.repr_instance(value, level)

    def repr_ndarray(self, value: Any, level: int) -> str:
        return short(value) if is_instance(value, "numpy.ndarray") else self.repr_instance(value, level)


_REPR = _Repr()
_REPR.maxlevel = 4
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 100
_REPR.maxdict = 50
_REPR.maxstring = 2_000
_REPR.maxlong = 400
_REPR.maxother = 2_000


def bounded_repr(value: object) -> str:
    """The last resort: reprlib's repr, cut in the middle."""
    return cut(_REPR.repr(value))
