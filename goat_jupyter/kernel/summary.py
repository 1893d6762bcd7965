"""A bounded, readable summary of a live Python object for KernelInspect.

pandas and numpy are never imported here: an object can only be a DataFrame when pandas is already
loaded in the kernel, so the checks look the classes up in `sys.modules`.
"""

from __future__ import annotations

import reprlib
import sys
from collections.abc import Sized
from typing import Any

from goat_jupyter.text import cut_middle

MAX_PART_CHARS = 8_000
SMALL_FRAME_ROWS = 20  # frames this short are shown whole (describe(), value_counts(), ...)
HEAD_ROWS = 5
MAX_COLUMNS = 60  # per-column lines (dtype, nulls) listed before "... N more"
HEAD_COLUMNS = 20  # columns printed in head()
DEEP_MEMORY_ROWS = 200_000  # above this, object columns are not measured string by string (slow)


class _Repr(reprlib.Repr):
    """reprlib with one-line summaries for frames and arrays nested in dicts and lists."""

    def repr_DataFrame(self, value: Any, level: int) -> str:  # noqa: N802 (reprlib's naming)
        return _short(value) if _is_pandas(value, "DataFrame") else self.repr_instance(value, level)

    def repr_Series(self, value: Any, level: int) -> str:  # noqa: N802
        return _short(value) if _is_pandas(value, "Series") else self.repr_instance(value, level)

    def repr_ndarray(self, value: Any, level: int) -> str:
        return _short(value) if _is_ndarray(value) else self.repr_instance(value, level)


_REPR = _Repr()
_REPR.maxlevel = 4
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 100
_REPR.maxdict = 50
_REPR.maxstring = 2_000
_REPR.maxlong = 400
_REPR.maxother = 2_000


def summarize(value: object) -> str:
    """DataFrames: shape, columns (dtype, nulls), memory, head; Series and arrays alike; others a cut repr."""
    name = type_name(value)
    try:
        if _is_pandas(value, "DataFrame"):
            return frame_summary(value, name)
        if _is_pandas(value, "Series"):
            return series_summary(value, name)
        if _is_ndarray(value):
            return array_summary(value, name)
        return generic_summary(value, name)
    except Exception as exc:  # a broken __repr__ or property must not fail the inspection
        return f"{name} (its summary failed: {type(exc).__name__}: {exc})"


def type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _is_pandas(value: object, kind: str) -> bool:
    pandas = sys.modules.get("pandas")
    cls = getattr(pandas, kind, None)
    return isinstance(cls, type) and isinstance(value, cls)


def _is_ndarray(value: object) -> bool:
    numpy = sys.modules.get("numpy")
    cls = getattr(numpy, "ndarray", None)
    return isinstance(cls, type) and isinstance(value, cls)


def frame_summary(frame: Any, name: str) -> str:
    rows = len(frame)
    shown, label = (frame, "all rows") if rows <= SMALL_FRAME_ROWS else (frame.head(HEAD_ROWS), "head()")
    parts = [
        f"{name} with shape {tuple(frame.shape)}, memory {_memory(frame)}",
        f"columns (dtype, nulls):\n{_column_table(frame)}",
        f"{label}:\n{cut(shown.to_string(max_cols=HEAD_COLUMNS))}",
    ]
    return "\n\n".join(parts)


def series_summary(series: Any, name: str) -> str:
    rows = len(series)
    shown, label = (series, "all values") if rows <= SMALL_FRAME_ROWS else (series.head(HEAD_ROWS), "head()")
    head = f"{name} {series.name!r} with {rows} values, dtype {series.dtype}"
    facts = f"nulls: {int(series.isna().sum())}, memory {_memory(series)}"
    return f"{head}\n{facts}\n\n{label}:\n{cut(shown.to_string())}"


def array_summary(array: Any, name: str) -> str:
    facts = f"{name} with shape {tuple(array.shape)} and dtype {array.dtype}, {_size(int(array.nbytes))}"
    return f"{facts}\n{cut(repr(array))}"


def generic_summary(value: object, name: str) -> str:
    size = ""
    if isinstance(value, Sized) and not isinstance(value, str | bytes):
        size = f" with {len(value)} items"
    elif isinstance(value, str | bytes):
        size = f" of length {len(value)}"
    return f"{name}{size}\n{cut(_REPR.repr(value))}"


def _column_table(frame: Any) -> str:
    """One line per column: name, dtype and null count (the first MAX_COLUMNS, by position)."""
    shown = frame.iloc[:, :MAX_COLUMNS]
    names = [str(c) for c in shown.columns]
    dtypes = [str(d) for d in shown.dtypes]
    nulls = [int(n) for n in shown.isna().sum().to_numpy()]
    width = max((len(n) for n in names), default=0)
    lines = [f"  {n:<{width}}  {d:<10} {k} null" for n, d, k in zip(names, dtypes, nulls, strict=True)]
    more = frame.shape[1] - len(names)
    if more > 0:
        lines.append(f"  ... {more} more columns")
    return "\n".join(lines) or "  (no columns)"


def _memory(value: Any) -> str:
    deep = len(value) <= DEEP_MEMORY_ROWS
    used = value.memory_usage(index=True, deep=deep)
    total = int(used.sum()) if hasattr(used, "sum") else int(used)
    return _size(total) + ("" if deep else " (object columns counted shallowly)")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    amount, unit = count / 1024, "KB"
    for bigger in ("MB", "GB"):
        if amount < 1024:
            break
        amount, unit = amount / 1024, bigger
    return f"{amount:.1f} {unit}"


def _short(value: Any) -> str:
    """One line for a frame, series or array inside a container."""
    if _is_ndarray(value):
        return f"<ndarray shape={tuple(value.shape)} dtype={value.dtype}>"
    kind = type(value).__name__
    if kind == "Series":
        return f"<Series {value.name!r} len={len(value)} dtype={value.dtype}>"
    columns = ", ".join(str(c) for c in list(value.columns[:8]))
    more = ", ..." if len(value.columns) > 8 else ""
    return f"<DataFrame shape={tuple(value.shape)} columns=[{columns}{more}]>"


def cut(text: str) -> str:
    return cut_middle(text, MAX_PART_CHARS)
