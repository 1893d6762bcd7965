"""pandas and polars DataFrames and Series: shape, dtypes, nulls, per-column statistics (numeric
min/mean/max, top categories), memory and a few rows. Neither library is imported here."""

from __future__ import annotations

from typing import Any

from goat_jupyter.represent.bounded import cut, size, type_name
from goat_jupyter.represent.registry import summarizer

SMALL_FRAME_ROWS = 20  # frames this short are shown whole (describe(), value_counts(), ...)
HEAD_ROWS = 5
MAX_COLUMNS = 40  # per-column lines (dtype, nulls, stats) before "... N more"
HEAD_COLUMNS = 12  # columns printed in the rows shown
TOP_VALUES = 3
SAMPLE_ROWS = 200_000  # above this, categories and object memory are counted on the first rows (slow)


def number(value: Any) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)


@summarizer("pandas.DataFrame", _builtin=True)
def pandas_frame(frame: Any) -> str:
    rows = len(frame)
    shown, label = (frame, "all rows") if rows <= SMALL_FRAME_ROWS else (frame.head(HEAD_ROWS), "head()")
    text = shown.to_string(max_cols=HEAD_COLUMNS, max_colwidth=40)
    parts = [
        f"{type_name(frame)} with shape {tuple(frame.shape)}, memory {_memory(frame)}",
        f"dtypes: {_dtype_counts(str(d) for d in frame.dtypes)}" if frame.shape[1] else "",
        _null_columns(frame) if frame.shape[1] > MAX_COLUMNS else "",
        f"columns (dtype, nulls, stats):\n{_column_table(frame)}",
        f"{label}:\n{cut(text, 3_000)}",
    ]
    return "\n\n".join(p for p in parts if p)


@summarizer("pandas.Series", _builtin=True)
def pandas_series(series: Any) -> str:
    rows = len(series)
    shown, label = (series, "all values") if rows <= SMALL_FRAME_ROWS else (series.head(HEAD_ROWS), "head()")
    head = f"{type_name(series)} {series.name!r} with {rows} values, dtype {series.dtype}"
    facts = f"nulls: {int(series.isna().sum())}, memory {_memory(series)}"
    stats = _pandas_stats(series)
    return f"{head}\n{facts}\nstats: {stats}\n\n{label}:\n{cut(shown.to_string(), 3_000)}"


def _dtype_counts(dtypes: Any) -> str:
    counts: dict[str, int] = {}
    for dtype in dtypes:
        counts[dtype] = counts.get(dtype, 0) + 1
    return ", ".join(f"{n} {d}" for d, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def _null_columns(frame: Any) -> str:
    """For wide frames, which of all the columns hold nulls (the table lists only the first ones)."""
    nulls = frame.isna().sum()
    having = [(str(name), int(count)) for name, count in nulls.items() if count]
    shown = ", ".join(f"{name[:30]} {count}" for name, count in having[:20])
    more = f", ... {len(having) - 20} more" if len(having) > 20 else ""
    return f"columns with nulls: {len(having)} of {frame.shape[1]}" + (f" ({shown}{more})" if having else "")


def _column_table(frame: Any) -> str:
    """One line per column: name, dtype, nulls, stats (the first MAX_COLUMNS, by position)."""
    count = min(frame.shape[1], MAX_COLUMNS)
    columns = [frame.iloc[:, i] for i in range(count)]
    names = [str(c) for c in frame.columns[:count]]
    width = min(max((len(n) for n in names), default=0), 30)
    lines = [
        f"  {n:<{width}}  {c.dtype!s:<10} {int(c.isna().sum())} null  {_pandas_stats(c)}"
        for n, c in zip(names, columns, strict=True)
    ]
    more = frame.shape[1] - count
    if more > 0:
        lines.append(
            f"  ... {more} more columns (inspect df.iloc[:, {count}:{count + MAX_COLUMNS}] for the next)"
        )
    return "\n".join(lines) or "  (no columns)"


def _pandas_stats(column: Any) -> str:
    kind = getattr(column.dtype, "kind", "O")
    try:
        if kind in "iuf":
            return f"min {number(column.min())} mean {number(column.mean())} max {number(column.max())}"
        if kind in "mM":
            return f"min {column.min()} max {column.max()}"
        if kind == "b":
            return f"true {int(column.sum())}"
        return _top_values(column)
    except (TypeError, ValueError, AttributeError):
        return ""


def _top_values(column: Any) -> str:
    sampled = len(column) > SAMPLE_ROWS
    part = column.iloc[:SAMPLE_ROWS] if sampled else column
    counts = part.value_counts(dropna=True)
    top = ", ".join(f"{str(k)[:30]!r} {int(v)}" for k, v in counts.head(TOP_VALUES).items())
    where = f" in the first {SAMPLE_ROWS:,} rows" if sampled else ""
    return f"top: {top} ({len(counts)} distinct{where})" if top else ""


def _memory(value: Any) -> str:
    deep = len(value) <= SAMPLE_ROWS
    used = value.memory_usage(index=True, deep=deep)
    total = int(used.sum()) if hasattr(used, "sum") else int(used)
    return size(total) + ("" if deep else " (object columns counted shallowly)")


@summarizer("polars.DataFrame", _builtin=True)
def polars_frame(frame: Any) -> str:
    names = list(frame.columns)
    lines = [
        f"  {n[:30]:<20}  {frame[n].dtype!s:<10} {frame[n].null_count()} null  {_polars_stats(frame[n])}"
        for n in names[:MAX_COLUMNS]
    ]
    if len(names) > MAX_COLUMNS:
        lines.append(f"  ... {len(names) - MAX_COLUMNS} more columns")
    parts = [
        f"{type_name(frame)} with shape {tuple(frame.shape)}, memory {size(int(frame.estimated_size()))}",
        f"dtypes: {_dtype_counts(str(d) for d in frame.dtypes)}" if names else "",
        "columns (dtype, nulls, stats):\n" + ("\n".join(lines) or "  (no columns)"),
        f"head():\n{cut(str(frame.head(HEAD_ROWS)), 3_000)}",
    ]
    return "\n\n".join(p for p in parts if p)


@summarizer("polars.Series", _builtin=True)
def polars_series(series: Any) -> str:
    head = f"{type_name(series)} {series.name!r} with {len(series)} values, dtype {series.dtype}"
    facts = f"nulls: {series.null_count()}, memory {size(int(series.estimated_size()))}"
    return f"{head}\n{facts}\nstats: {_polars_stats(series)}\n\nhead():\n{cut(str(series.head(HEAD_ROWS)), 3_000)}"


def _polars_stats(column: Any) -> str:
    try:
        if column.dtype.is_numeric():
            return f"min {number(column.min())} mean {number(column.mean())} max {number(column.max())}"
        if column.dtype.is_temporal():
            return f"min {column.min()} max {column.max()}"
        counts = column.drop_nulls().head(SAMPLE_ROWS).value_counts(sort=True)
        top = ", ".join(f"{str(row[0])[:30]!r} {row[1]}" for row in counts.head(TOP_VALUES).iter_rows())
        return f"top: {top} ({counts.height} distinct)" if top else ""
    except Exception:  # an unusual dtype (nested, object) has no such statistics
        return ""
