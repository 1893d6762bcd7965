"""goat_jupyter: a notebook-native LLM agent for JupyterLab (`%load_ext goat_jupyter`, then `%%goat`)."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ip: Any) -> None:
    """Register %%goat / %goat; the agent and litellm warm up on a background thread."""
    from goat_jupyter import extension

    extension.load(ip)


def unload_ipython_extension(ip: Any) -> None:
    from goat_jupyter import extension

    extension.unload(ip)


async def _run(line: str, body: str) -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the %%goat cell rewrite: `await goat_jupyter._run(line, body)`."""
    from goat_jupyter.extension import await_agent_import

    await await_agent_import()
    from goat_jupyter import magic

    await magic.run_cell(line, body)


async def _undo() -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the `%goat undo` rewrite."""
    from goat_jupyter.extension import await_agent_import

    await await_agent_import()
    from goat_jupyter.checkpoint_run import undo_last

    await undo_last()


def _jupyter_labextension_paths() -> list[dict[str, str]]:  # pyright: ignore[reportUnusedFunction]
    return [{"src": "labextension", "dest": "goat-jupyter"}]
