"""The Renderer protocol the agent loop talks to, and the factory that picks cell or plain output."""

from __future__ import annotations

import sys
from typing import Literal, Protocol

from goat_jupyter.tools.events import Event
from goat_jupyter.ui.cell import CellRenderer
from goat_jupyter.ui.plain import PlainRenderer

RendererKind = Literal["cell", "plain", "auto"]


class Renderer(Protocol):
    """Turns one run's events into output; `handle` is cheap, synchronous and never raises."""

    def begin(self, activity: str = "Starting") -> None: ...

    def start(self, prompt: str, *, model: str, mode: str, style: str = "default") -> None: ...

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


def make_renderer(kind: RendererKind = "auto") -> Renderer:
    """`cell` or `plain` as asked; `auto` is the cell renderer inside a kernel with a rich frontend."""
    if kind == "cell" or (kind == "auto" and in_rich_kernel()):
        return CellRenderer()
    return PlainRenderer()


def in_rich_kernel() -> bool:
    """True inside an ipykernel kernel (Jupyter, nbclient), whose frontend shows rich output."""
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return False
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
