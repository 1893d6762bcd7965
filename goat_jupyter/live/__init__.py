"""Notebook access: the backend protocol, the nbformat file backend, and cell lookup."""

from __future__ import annotations

from goat_jupyter.live.bridge import (
    CellInfo,
    CellType,
    NotebookBackend,
    address_label,
    cell_label,
    find_cell,
)
from goat_jupyter.live.file_bridge import FileNotebook, load_notebook

__all__ = [
    "CellInfo",
    "CellType",
    "FileNotebook",
    "NotebookBackend",
    "address_label",
    "cell_label",
    "find_cell",
    "load_notebook",
]
