"""What a browser tab that reloads during a `%%goat` run needs to pick it up again.

The kernel sends a running cell's output with the execute request's id as parent; a reloaded tab has
no record of that request, so JupyterLab drops the output and the open approval is gone with it. The
labextension opens a comm to `goat.live` when it connects to a kernel and gets the running cell's
request id, cell id, execution count, open prompts and every output sent for it so far (kept here from
the kernel's own iopub messages, see `run_outputs`): it shows those in place of the cell's saved
outputs, which lag behind, routes the request's later output into the cell, and the user answers the
prompts' widgets as before. This does not depend on whether JupyterLab trusts the notebook: the
outputs come live from the kernel, as a cell's outputs do when the tab runs it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Generator
from dataclasses import asdict, dataclass
from typing import Any, cast

from goat_jupyter.kernel.run_outputs import RECORDED, RunOutputs
from goat_jupyter.ui import pending

TARGET = "goat.live"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveRun:
    msg_id: str
    cell_id: str | None
    execution_count: int


_runs: list[LiveRun] = []  # the %%goat cells executing now: one on the main shell, more on subshells
_outputs: dict[str, RunOutputs] = {}  # by the runs' request ids
# Recording a message and sending it happen under this lock, and so does the snapshot a reloaded tab
# gets with its own send: every output is then either in the snapshot or arrives after it, never both.
_LOCK = threading.RLock()
_taps: dict[int, _Tap] = {}  # by id() of the Session they wrap


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
    if run is None:
        yield
        return
    taps = [_Tap.on(session) for session in _sessions(shell)]
    with _LOCK:
        _runs.append(run)
        _outputs[run.msg_id] = RunOutputs()
    try:
        yield
    finally:
        with _LOCK:
            if run in _runs:
                _runs.remove(run)
            _outputs.pop(run.msg_id, None)
        for tap in taps:
            tap.release()


def state() -> dict[str, Any]:
    from goat_jupyter.live import cell_mark

    with _LOCK:
        prompts = [{**asdict(p), "mark": cell_mark.shown(p.model_id)} for p in pending.pending()]
        return {"runs": [_described(run, prompts) for run in _runs]}


def _described(run: LiveRun, prompts: list[dict[str, Any]]) -> dict[str, Any]:
    outputs = _outputs.get(run.msg_id)
    return {**asdict(run), "prompts": prompts, "outputs": outputs.listing() if outputs else []}


def observe(msg_type: str, content: Any, parent_msg_id: str | None) -> None:
    """Keep one message sent for a live run (what the tap calls for every message the kernel sends)."""
    outputs = _outputs.get(parent_msg_id or "")
    if outputs is not None and msg_type in RECORDED and isinstance(content, dict):
        outputs.apply(msg_type, cast(dict[str, Any], content))


class _Tap:
    """Wraps one jupyter_client Session's `send` while a run is live: the one place every message to
    the frontend passes (displays and their updates from the shell thread, streams from the IO thread)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.original = session.send
        self.users = 0

    @classmethod
    def on(cls, session: Any) -> _Tap:
        with _LOCK:
            tap = _taps.get(id(session))
            if tap is None:
                tap = _taps[id(session)] = cls(session)
                session.send = tap.send
            tap.users += 1
            return tap

    def release(self) -> None:
        with _LOCK:
            self.users -= 1
            if self.users > 0 or _taps.pop(id(self.session), None) is not self:
                return
            if cast(dict[str, Any], vars(self.session)).get("send") == self.send:  # not if wrapped after us
                del self.session.send  # the instance attribute: the class's method shows again

    def send(
        self,
        stream: Any,
        msg_or_type: Any,
        content: Any = None,
        parent: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        with _LOCK:
            with contextlib.suppress(Exception):  # recording must never keep a message from going out
                observe(*_message_parts(msg_or_type, content, parent))
            return self.original(stream, msg_or_type, content, parent, *args, **kwargs)


def _message_parts(msg_or_type: Any, content: Any, parent: Any) -> tuple[str, Any, str | None]:
    """(type, content, parent request id) of what `Session.send` was given: a built message or a type."""
    if isinstance(msg_or_type, dict):
        msg = cast(dict[str, Any], msg_or_type)
        msg_type, content, parent = msg["header"]["msg_type"], msg.get("content"), msg.get("parent_header")
    else:
        msg_type = str(msg_or_type)
    header: Any = cast(dict[str, Any], parent).get("header", parent) if isinstance(parent, dict) else {}
    msg_id = cast(dict[str, Any], header).get("msg_id") if isinstance(header, dict) else None
    return msg_type, content, msg_id if isinstance(msg_id, str) else None


def _sessions(shell: Any) -> list[Any]:
    """The Session objects the kernel sends iopub messages with (one in ipykernel; kept general)."""
    owners = [getattr(shell, "kernel", None), getattr(shell, "display_pub", None), sys.stdout, sys.stderr]
    found: dict[int, Any] = {}
    for owner in owners:
        session = getattr(owner, "session", None)
        if session is not None and callable(getattr(session, "send", None)):
            found.setdefault(id(session), session)
    return list(found.values())


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
    with _LOCK:  # the snapshot and its send, with no run output in between
        comm.send(state())
    comm.close()
