"""What a browser tab that reloads during a `%%goat` run needs to pick it up again.

The kernel sends a running cell's output with the execute request's id as parent; a reloaded tab has
no record of that request, so JupyterLab drops the output and the open approval is gone with it. The
labextension opens a comm to `goat.live` when it connects to a kernel and gets the running cell's
request id, cell id, execution count and open prompts: it then routes that request's output into the
cell and shows the prompts' widgets again, which the user can answer as before.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Generator
from dataclasses import asdict, dataclass
from typing import Any

from goat_jupyter.ui import pending

TARGET = "goat.live"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveRun:
    msg_id: str
    cell_id: str | None
    execution_count: int


_runs: list[LiveRun] = []  # the %%goat cells executing now: one on the main shell, more on subshells


def install() -> None:
    """Register the comm target (idempotent: the comm manager keeps one callback per target)."""
    try:
        from comm import get_comm_manager

        get_comm_manager().register_target(TARGET, _on_open)
    except Exception:  # no kernel here (terminal IPython): nothing can reload
        _log.debug("goat: could not register %s", TARGET, exc_info=True)


@contextlib.contextmanager
def running(shell: Any) -> Generator[None]:
    """Mark the %%goat cell the kernel is executing now as live while the block runs."""
    run = _current_request(shell)
    if run is not None:
        _runs.append(run)
    try:
        yield
    finally:
        if run is not None and run in _runs:
            _runs.remove(run)


def state() -> dict[str, Any]:
    prompts = [asdict(prompt) for prompt in pending.pending()]
    return {"runs": [{**asdict(run), "prompts": prompts} for run in _runs]}


def _current_request(shell: Any) -> LiveRun | None:
    kernel = getattr(shell, "kernel", None)
    try:
        parent: Any = kernel.get_parent("shell") if kernel is not None else None
        msg_id: Any = parent["header"]["msg_id"]
        metadata: dict[str, Any] = parent.get("metadata") or {}
        cell_id = metadata.get("cellId")
    except Exception:  # no kernel, or no execute request behind this code
        return None
    count = int(getattr(shell, "execution_count", 0) or 0)
    return LiveRun(str(msg_id), cell_id if isinstance(cell_id, str) else None, count)


def _on_open(comm: Any, _msg: Any) -> None:
    comm.send(state())
    comm.close()
