"""goat_jupyter: a notebook-native LLM agent for JupyterLab (`%load_ext goat_jupyter`, then `%%goat`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goat_jupyter.api import approver, hook, tool, unregister_tool
    from goat_jupyter.represent import summarizer

from goat_jupyter.version import __version__

__all__ = [
    "__version__",
    "approver",
    "hook",
    "load_ipython_extension",
    "summarizer",
    "tool",
    "unload_ipython_extension",
    "unregister_tool",
]
_PUBLIC_API = ("tool", "hook", "approver", "unregister_tool")


def __getattr__(name: str) -> Any:
    """The public API (goat_jupyter.tool, .hook, .approver) loads on first use: %load_ext stays light."""
    if name == "summarizer":  # light: no agent import, no pandas
        from goat_jupyter.represent import summarizer

        return summarizer
    if name in _PUBLIC_API:
        from goat_jupyter.kernel.extension import wait_for_agent_import

        wait_for_agent_import()  # the warm-up thread may be importing the same modules right now
        from goat_jupyter import api

        return getattr(api, name)
    raise AttributeError(f"module 'goat_jupyter' has no attribute {name!r}")


def load_ipython_extension(ip: Any) -> None:
    """Register %%goat / %goat; the agent and litellm warm up on a background thread."""
    from goat_jupyter.kernel import extension

    extension.load(ip)


def unload_ipython_extension(ip: Any) -> None:
    from goat_jupyter.kernel import extension

    extension.unload(ip)


async def _run(line: str, body: str) -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the %%goat cell rewrite: `await goat_jupyter._run(line, body)`."""
    from IPython.core.getipython import get_ipython

    from goat_jupyter.kernel import live
    from goat_jupyter.kernel.extension import await_agent_import
    from goat_jupyter.ui import make_renderer  # already imported by %load_ext: cheap

    with live.running(get_ipython()):  # from its first output on, a tab that reloads can pick the run up
        renderer = make_renderer("auto")
        renderer.begin()  # a live line from the first moment: importing the agent can take seconds
        try:
            await await_agent_import()
        except BaseException:
            renderer.close()
            raise
        from goat_jupyter.kernel import magic

        await magic.run_cell(line, body, renderer)


async def _undo() -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the `%goat undo` rewrite."""
    from goat_jupyter.kernel.extension import await_agent_import

    await await_agent_import()
    from goat_jupyter.kernel.checkpoint_run import undo_last
    from goat_jupyter.kernel.magic import runtime

    await undo_last(runtime())


async def _compact(focus: str) -> None:  # pyright: ignore[reportUnusedFunction]
    """The target of the `%goat compact [focus]` rewrite."""
    from goat_jupyter.kernel.extension import await_agent_import

    await await_agent_import()
    from goat_jupyter.kernel.commands.context import compact_in_cell
    from goat_jupyter.kernel.magic import runtime

    await compact_in_cell(runtime(), focus)


def _jupyter_server_extension_points() -> list[dict[str, str]]:  # pyright: ignore[reportUnusedFunction]
    """The settings panel's endpoints (goat_jupyter.server); enabled by jupyter-config/."""
    return [{"module": "goat_jupyter.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:  # pyright: ignore[reportUnusedFunction]
    return [{"src": "labextension", "dest": "goat-jupyter"}]
