"""goat_jupyter: a notebook-native LLM agent for JupyterLab."""

from __future__ import annotations

__version__ = "0.1.0"
