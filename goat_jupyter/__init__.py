"""goat_jupyter: a notebook-native LLM agent for JupyterLab (`%load_ext goat_jupyter`, then `%%goat`)."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ip: Any) -> None:
    """Register %%goat / %goat and start importing litellm in the background."""
    from goat_jupyter import magic

    magic.load_ipython_extension(ip)


def unload_ipython_extension(ip: Any) -> None:
    from goat_jupyter import magic

    magic.unload_ipython_extension(ip)


async def _run(line: str, body: str) -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the %%goat cell rewrite: `await goat_jupyter._run(line, body)`."""
    from goat_jupyter import magic

    await magic.run_cell(line, body)


def _jupyter_labextension_paths() -> list[dict[str, str]]:  # pyright: ignore[reportUnusedFunction]
    return [{"src": "labextension", "dest": "goat-jupyter"}]
