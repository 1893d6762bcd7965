"""matplotlib and plotly figures: the axes' titles, labels and series names (the image itself reaches
the model as the cell's image output)."""

from __future__ import annotations

from typing import Any

from goat_jupyter.represent.bounded import type_name
from goat_jupyter.represent.registry import summarizer

MAX_SERIES = 20


@summarizer("matplotlib.figure.Figure", _builtin=True)
def matplotlib_figure(figure: Any) -> str:
    width, height = figure.get_size_inches()
    lines = [f"{type_name(figure)}, {width:g} x {height:g} in, {len(figure.axes)} axes"]
    title = figure._suptitle.get_text() if getattr(figure, "_suptitle", None) else ""
    if title:
        lines.append(f"suptitle: {title!r}")
    lines += [_axes(i, axes) for i, axes in enumerate(figure.axes)]
    return "\n".join(lines)


@summarizer("matplotlib.axes.Axes", _builtin=True)
def matplotlib_axes(axes: Any) -> str:
    return f"{type_name(axes)}\n{_axes(0, axes)}"


def _axes(index: int, axes: Any) -> str:
    facts = [f"axes {index}: title {axes.get_title()!r}, x {axes.get_xlabel()!r}, y {axes.get_ylabel()!r}"]
    series = [f"line {line.get_label()!r} ({len(line.get_xdata())} points)" for line in axes.get_lines()]
    series += [f"{type(c).__name__} {c.get_label()!r}" for c in axes.collections]
    if axes.patches:
        series.append(f"{len(axes.patches)} patches (bars)")
    facts += [f"  {s}" for s in series[:MAX_SERIES]]
    if len(series) > MAX_SERIES:
        facts.append(f"  ... {len(series) - MAX_SERIES} more")
    return "\n".join(facts)


@summarizer("plotly.graph_objs.Figure", _builtin=True)
def plotly_figure(figure: Any) -> str:
    layout = figure.layout
    title = getattr(layout.title, "text", None)
    x_title = getattr(getattr(layout.xaxis, "title", None), "text", None)
    y_title = getattr(getattr(layout.yaxis, "title", None), "text", None)
    lines = [f"{type_name(figure)}: title {title!r}, x {x_title!r}, y {y_title!r}, {len(figure.data)} traces"]
    for trace in list(figure.data)[:MAX_SERIES]:
        points = len(trace.x) if getattr(trace, "x", None) is not None else "?"
        lines.append(f"  {trace.type} {trace.name!r} ({points} points)")
    return "\n".join(lines)
