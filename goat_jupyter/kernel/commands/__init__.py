"""`%goat <command>`: dispatch and help, configuration (config, autoload, keys) and the context
window (context, compact)."""

from __future__ import annotations

from goat_jupyter.kernel.commands.dispatch import HELP, dispatch

__all__ = ["HELP", "dispatch"]
