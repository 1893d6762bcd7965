"""What `%load_ext goat_jupyter` does, kept light: the agent's modules load on a background thread."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

CELL_PREFIX = "%%goat"
# Set once the warm-up thread has imported the agent. Importing the same modules from two threads at
# once can trip Python's import-deadlock detection, so the kernel thread waits for this first.
_agent_imported = threading.Event()
_agent_imported.set()  # nothing to wait for until load() starts a warm-up
# `%goat` lines that wait on the notebook or the model: run as awaits, so the kernel stays responsive.
_UNDO_LINE = re.compile(r"%goat\s+undo\s*")
_UNDO_CALL = "await __import__('goat_jupyter')._undo()\n"
_COMPACT_LINE = re.compile(r"%goat\s+compact(?:\s+(?P<focus>.*?))?\s*")


def transform_goat_cell(lines: list[str]) -> list[str]:
    """Rewrite a %%goat cell into a top-level await so it runs as an async cell (ipykernel >= 7.4)."""
    if not lines or not lines[0].startswith(CELL_PREFIX):
        return lines
    first = lines[0][len(CELL_PREFIX) :]
    if first and not first[0].isspace():
        return lines  # some other magic that starts with %%goat
    body = "".join(lines[1:])
    return [f"await __import__('goat_jupyter')._run({first.strip()!r}, {body!r})\n"]


def transform_undo(lines: list[str]) -> list[str]:
    """Rewrite top-level `%goat undo` and `%goat compact` lines into awaits: undo makes notebook-bridge
    round trips, compact waits for the small model (with a live line, Stop working)."""
    if lines and lines[0].startswith("%%"):
        return lines  # a cell magic's body is its own business (a %%goat prompt may mention undo)
    return [_awaited(line) for line in lines]


def _awaited(line: str) -> str:
    text = line.rstrip("\n")
    if _UNDO_LINE.fullmatch(text):
        return _UNDO_CALL
    compact = _COMPACT_LINE.fullmatch(text)
    if compact:
        return f"await __import__('goat_jupyter')._compact({compact.group('focus') or ''!r})\n"
    return line


def wait_for_agent_import(timeout_s: float = 60) -> None:
    """Block until the warm-up thread has finished importing the agent (normally long done)."""
    _agent_imported.wait(timeout_s)


async def await_agent_import() -> None:
    if not _agent_imported.is_set():
        await asyncio.to_thread(wait_for_agent_import)


def goat_line_magic(line: str) -> Any:
    """%goat config|status|reset|history|resume|mcp|undo|help."""
    wait_for_agent_import()
    from goat_jupyter.kernel import magic

    return magic.goat_line_magic(line)


def goat_cell_magic(line: str, cell: str) -> None:
    wait_for_agent_import()
    from goat_jupyter.kernel import magic

    magic.goat_cell_magic(line, cell)


def _start_background_services() -> None:
    from goat_jupyter.kernel import magic

    magic.runtime().start_background_services()  # MCP servers connect while the user types


def _warm_up(loop: asyncio.AbstractEventLoop | None) -> None:
    """Import the agent (~1 s), start background services on the kernel's loop, then warm litellm."""
    try:
        import goat_jupyter.kernel.magic  # noqa: F401  # pyright: ignore[reportUnusedImport] - the import is the point
        from goat_jupyter.tools import builtin_tools

        for tool in builtin_tools():
            tool.parameters_schema()  # pydantic's schema generation is cached per tool class
        import nbformat  # pyright: ignore[reportUnusedImport] - 3 s cold: not on the first NotebookEdit
        import nbformat.validator  # noqa: F401  # pyright: ignore[reportUnusedImport]
    finally:
        _agent_imported.set()
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(_start_background_services)
    from goat_jupyter.agent.litellm_loader import prewarm_now

    prewarm_now()


def load(ip: Any) -> None:
    from goat_jupyter.kernel import executions, live, llm_mime, review
    from goat_jupyter.ui import comm_idle

    llm_mime.install(ip)  # outputs carry goat's summary for the model (text/llm+plain)
    comm_idle.install(getattr(ip, "kernel", None))  # widget value changes during a running cell
    executions.install(ip)  # what the kernel runs from now on: cell id, count, source hash, names
    live.install()  # a browser tab that reloads during a run asks here what is running
    review.install()  # the user's Keep / Undo of goat's notebook edits (labextension review_ui.ts)
    for transform in (transform_goat_cell, transform_undo):
        if transform not in ip.input_transformers_cleanup:
            ip.input_transformers_cleanup.append(transform)
    ip.register_magic_function(goat_line_magic, magic_kind="line", magic_name="goat")
    ip.register_magic_function(goat_cell_magic, magic_kind="cell", magic_name="goat")
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    _agent_imported.clear()
    threading.Thread(target=_warm_up, args=(loop,), name="goat-warm-up", daemon=True).start()


def unload(ip: Any) -> None:
    from goat_jupyter.kernel import llm_mime

    llm_mime.uninstall(ip)
    for transform in (transform_goat_cell, transform_undo):
        if transform in ip.input_transformers_cleanup:
            ip.input_transformers_cleanup.remove(transform)
