"""matplotlib figures drawn by a RunCell run become image outputs of that run.

IPython shows inline figures in a `post_execute` hook, which a RunCell run (code executed from inside
the awaiting %%goat cell) never triggers: without this the plot would land in the %%goat cell at its
end and never reach the model. With the inline backend its own flush runs inside the capture; with
any other backend (Agg in a terminal or a test) figures the run created or changed are rendered to
PNG. Figures left open before the run and untouched by it are not sent again.
"""

from __future__ import annotations

import base64
import io
import sys
from typing import Any

from goat_jupyter.kernel.capture import OutputSink
from goat_jupyter.represent import LLM_MIME, represent

INLINE_BACKENDS = ("inline", "module://matplotlib_inline.backend_inline")
FigureState = dict[int, tuple[Any, bool]]  # id(figure) -> (figure, stale before the run)


def open_figures() -> FigureState:
    """The open pyplot figures and whether each has undrawn changes (empty when pyplot is unused)."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return {}
    figures = [manager.canvas.figure for manager in helpers.Gcf.get_all_fig_managers()]
    return {id(f): (f, bool(f.stale)) for f in figures}


def flush_figures(sink: OutputSink, before: FigureState) -> None:
    """Publish the figures the run drew (call inside the capture, so the displays reach `sink`)."""
    inline = _inline_backend()
    if inline is not None:
        inline.flush_figures()
        return
    for figure_id, (figure, _) in open_figures().items():
        if _drawn_by_run(figure, before.get(figure_id)):
            _publish(sink, figure)


def _inline_backend() -> Any:
    """matplotlib-inline's module when it is the active backend, else None."""
    module = sys.modules.get("matplotlib_inline.backend_inline")
    matplotlib = sys.modules.get("matplotlib")
    if module is None or matplotlib is None:
        return None
    backend = str(matplotlib.rcParams._get("backend"))  # no auto-selection (it would import a GUI)
    return module if backend in INLINE_BACKENDS else None


def _drawn_by_run(figure: Any, earlier: tuple[Any, bool] | None) -> bool:
    """New figures, and figures the run changed (stale now, not stale before)."""
    if earlier is None or earlier[0] is not figure:
        return True
    return bool(figure.stale) and not earlier[1]


def _publish(sink: OutputSink, figure: Any) -> None:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", bbox_inches="tight")
    except Exception as exc:  # the user's plot is broken: say so in the outputs, like a notebook
        sink.stream("stderr", f"The figure {figure!r} could not be drawn: {type(exc).__name__}: {exc}\n")
        return
    data = {
        "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
        "text/plain": repr(figure),
        LLM_MIME: represent(figure),  # the axes' titles, labels and series names beside the image
    }
    sink.display(data, {}, None, False)
