"""numpy arrays (shape, dtype, size, statistics, a corner) and xarray objects (dims, coords,
variables, statistics). numpy's statistics run on the array itself: fast even for hundreds of MB."""

from __future__ import annotations

import sys
from typing import Any

from goat_jupyter.represent.bounded import cut, size, type_name
from goat_jupyter.represent.frames import number
from goat_jupyter.represent.registry import summarizer

CORNER = 6  # rows and columns shown of each of the first two axes


@summarizer("numpy.ndarray", _builtin=True)
def array_summary(array: Any) -> str:
    facts = f"{type_name(array)} with shape {tuple(array.shape)} and dtype {array.dtype}, {size(int(array.nbytes))}"
    stats = _stats(array)
    return "\n".join(p for p in (facts, stats, f"corner:\n{cut(_corner(array), 3_000)}") if p)


def _stats(array: Any) -> str:
    """min/mean/max/std and NaNs for numbers, counts of true for booleans; nothing for other kinds."""
    numpy = sys.modules["numpy"]
    kind = array.dtype.kind
    if array.size == 0 or kind not in "biuf":
        return ""
    if kind == "b":
        return f"stats: true {int(array.sum())} of {array.size}"
    with numpy.errstate(all="ignore"):
        nans = int(numpy.isnan(array).sum()) if kind == "f" else 0
        low, mean = numpy.nanmin(array), numpy.nanmean(array, dtype="float64")
        high, std = numpy.nanmax(array), numpy.nanstd(array, dtype="float64")
    nan_note = f", {nans} NaN" if nans else ""
    return f"stats: min {number(low)} mean {number(mean)} max {number(high)} std {number(std)}{nan_note}"


def _corner(array: Any) -> str:
    numpy = sys.modules["numpy"]
    index = tuple(slice(0, CORNER) if axis < 2 else 0 for axis in range(array.ndim))
    corner = array[index] if array.ndim else array
    where = "" if array.ndim <= 2 else f" (first {CORNER} x {CORNER} of [:, :, 0...])"
    with numpy.printoptions(threshold=200, edgeitems=3, linewidth=120, precision=5):
        return repr(corner) + where


@summarizer("xarray.DataArray", _builtin=True)
def xarray_array(array: Any) -> str:
    dims = ", ".join(f"{d}: {n}" for d, n in array.sizes.items())
    head = f"{type_name(array)} {array.name!r} ({dims}), dtype {array.dtype}, {size(int(array.nbytes))}"
    coords = ", ".join(str(c) for c in list(array.coords)[:30]) or "(none)"
    attrs = cut(repr(dict(array.attrs)), 1_000) if array.attrs else "(none)"
    stats = _stats(array.values) if array.size < 50_000_000 else ""
    return "\n".join(p for p in (head, f"coords: {coords}", f"attrs: {attrs}", stats) if p)


@summarizer("xarray.Dataset", _builtin=True)
def xarray_dataset(dataset: Any) -> str:
    dims = ", ".join(f"{d}: {n}" for d, n in dataset.sizes.items())
    lines = [f"{type_name(dataset)} ({dims}), {size(int(dataset.nbytes))}"]
    lines.append(f"coords: {', '.join(str(c) for c in list(dataset.coords)[:30]) or '(none)'}")
    for name, variable in list(dataset.data_vars.items())[:40]:
        shape = ", ".join(str(d) for d in variable.dims)
        lines.append(f"  {name} ({shape}) {variable.dtype}")
    if len(dataset.data_vars) > 40:
        lines.append(f"  ... {len(dataset.data_vars) - 40} more variables")
    return "\n".join(lines)
