"""The transcript renderers: rich cell output in Jupyter, plain text elsewhere."""

from __future__ import annotations

from goat_jupyter.ui.cell import CellRenderer, DisplayFunction, DisplayHandleLike
from goat_jupyter.ui.plain import PlainRenderer
from goat_jupyter.ui.renderer import Renderer, RendererKind, in_rich_kernel, make_renderer

__all__ = [
    "CellRenderer",
    "DisplayFunction",
    "DisplayHandleLike",
    "PlainRenderer",
    "Renderer",
    "RendererKind",
    "in_rich_kernel",
    "make_renderer",
]
