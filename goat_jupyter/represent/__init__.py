"""The model-facing representation of live objects and outputs (README "What the model reads"), and
large outputs kept whole on disk while the model gets their ends and a handle."""

from __future__ import annotations

from goat_jupyter.represent import arrays as arrays
from goat_jupyter.represent import figures as figures
from goat_jupyter.represent import frames as frames
from goat_jupyter.represent import structures as structures
from goat_jupyter.represent.order import LLM_MIME, output_text, own_repr_llm, represent
from goat_jupyter.represent.registry import find, summarizer, unregister
from goat_jupyter.represent.spill import Spilled, spill

__all__ = [
    "LLM_MIME",
    "Spilled",
    "find",
    "output_text",
    "own_repr_llm",
    "represent",
    "spill",
    "summarizer",
    "unregister",
]
