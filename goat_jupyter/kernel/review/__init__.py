"""The user's Keep / Undo of goat's notebook edits arriving from the labextension (review_ui.ts).

The page opens a comm to `goat.review` with its decisions; they wait here, as sent, until the next
`%%goat` run takes them (review/note.py checks them and tells the transcript and the model). Kept
light: `%load_ext` registers the target before the agent's modules are imported.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

TARGET = "goat.review"
MAX_WAITING = 100  # messages; a page sends one per Keep / Undo (or per Keep all / Undo all)
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_waiting: list[object] = []


def install() -> None:
    """Register the comm target (idempotent: the comm manager keeps one callback per target)."""
    try:
        from comm import get_comm_manager

        get_comm_manager().register_target(TARGET, _on_open)
    except Exception:  # no kernel here (terminal IPython): no page sends decisions
        _log.debug("goat: could not register %s", TARGET, exc_info=True)


def _on_open(comm: Any, msg: dict[str, Any]) -> None:
    try:
        receive(msg.get("content", {}).get("data") or {})
    finally:
        comm.close()


def receive(data: object) -> None:
    """Keep one message's data for the next run (the oldest go past MAX_WAITING)."""
    with _lock:
        _waiting.append(data)
        del _waiting[:-MAX_WAITING]


def drain() -> list[object]:
    with _lock:
        taken = list(_waiting)
        _waiting.clear()
    return taken
