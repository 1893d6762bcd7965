"""A RunCell as the user sees a cell run: its outputs stream into the target cell while it runs, and
the goat row's timer keeps moving even when the cell's code blocks the kernel (a `time.sleep` loop).

The code runs on the kernel's main thread, inside the awaiting %%goat cell (capture.py), so nothing
that waits for the event loop can show it. Instead:
- `CellEcho` publishes each output on IOPub at once, from the thread that produced it, with a parent
  header of its own (a run id): the labextension routes that id's messages into the target cell
  (`run_started`), as JupyterLab's own output area does for an execute request.
- `Pulse`, a small thread, flushes the echo every `PULSE_S` and, while the main thread is inside the
  cell's synchronous code (`SyncGate`), hands the text printed since the last tick to the tool card.
  That is safe only then: the loop, the only other user of the renderer, is stopped by the same code.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import threading
import time
import uuid
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any

PULSE_S = 0.1
STREAM_FLUSH_S = 0.05  # a print is sent at once unless the last stream message left this recently
Publish = Callable[[str, dict[str, Any]], None]
Progress = Callable[[str | None], None]


class SyncGate:
    """Marks the stretches where the main thread runs the cell's synchronous code (the loop is stopped)."""

    def __init__(self) -> None:
        self.active = False
        self.lock = threading.Lock()

    @contextmanager
    def inside(self) -> Generator[None]:
        self.active = True
        try:
            yield
        finally:
            self.active = False
            with self.lock:  # a tick that began before the code returned ends before the loop resumes
                pass

    def while_blocked(self, action: Callable[[], None]) -> None:
        """Run `action` only while the main thread is inside the code (checked under the lock)."""
        if not self.active or not self.lock.acquire(timeout=PULSE_S):
            return
        try:
            if self.active:
                action()
        finally:
            self.lock.release()


class CellEcho:
    """Sends a run's outputs on IOPub as they happen; consecutive prints are batched per STREAM_FLUSH_S."""

    def __init__(self, publish: Publish, clock: Callable[[], float] = time.monotonic) -> None:
        self._publish = publish
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: list[tuple[str, str]] = []  # (stream name, text), merged while the name repeats
        self._last_sent = float("-inf")

    def __call__(self, kind: str, content: Mapping[str, Any]) -> None:
        if kind == "stream":
            self._stream(str(content["name"]), str(content["text"]))
            return
        self.flush()
        self._publish(kind, dict(content))

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
            if pending:
                self._last_sent = self._clock()
        for name, text in pending:
            self._publish("stream", {"name": name, "text": text})

    def _stream(self, name: str, text: str) -> None:
        with self._lock:
            if self._pending and self._pending[-1][0] == name:
                self._pending[-1] = (name, self._pending[-1][1] + text)
            else:
                self._pending.append((name, text))
            due = self._clock() - self._last_sent >= STREAM_FLUSH_S
        if due:
            self.flush()


class CardFeed:
    """The text the cell prints, for the RunCell tool card: drained by the loop, or by the pulse while
    the loop is stopped (then also with no new text, so the card's timer is redrawn)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._loop = asyncio.get_running_loop()
        self._outside = contextvars.copy_context()  # not the capturing context: no loop-back
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._scheduled = False

    def on_text(self, text: str) -> None:
        with self._lock:
            self._pending.append(text)
            schedule = not self._scheduled
            self._scheduled = True
        if schedule:
            self._loop.call_soon_threadsafe(self._drain, context=self._outside)

    def tick_blocked(self) -> None:
        self._progress(self._take() or None)

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        text = self._take()
        if text:
            self._progress(text)

    def _take(self) -> str:
        with self._lock:
            text, self._pending = "".join(self._pending), []
        return text


class Pulse:
    """The thread that keeps a running RunCell visible (see the module docstring)."""

    def __init__(self, gate: SyncGate, echo: CellEcho | None, feed: CardFeed) -> None:
        self._gate = gate
        self._echo = echo
        self._feed = feed
        self._stop = threading.Event()
        context = contextvars.copy_context()  # the %%goat cell's: its displays keep their parent
        self._thread = threading.Thread(target=context.run, args=(self._loop,), name="goat-runcell-pulse")
        self._thread.daemon = True

    def __enter__(self) -> Pulse:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)
        if self._echo is not None:
            self._echo.flush()

    def _loop(self) -> None:
        while not self._stop.wait(PULSE_S):
            if self._echo is not None:
                self._echo.flush()
            self._gate.while_blocked(self._feed.tick_blocked)


def new_run_id() -> str:
    return f"goat-run-{uuid.uuid4().hex}"


def iopub_publisher(shell: Any, run_id: str) -> Publish | None:
    """Publishes on the kernel's IOPub as replies to a request `run_id` (None outside ipykernel).
    Thread-safe: ipykernel's IOPub socket hands every message to its own IO thread."""
    kernel = getattr(shell, "kernel", None)
    session = getattr(kernel, "session", None)
    socket = getattr(kernel, "iopub_socket", None)
    if session is None or socket is None:
        return None
    jsonutil: Any = importlib.import_module("ipykernel.jsonutil")  # untyped
    parent = {
        "msg_id": run_id,
        "msg_type": "execute_request",
        "session": session.session,
        "username": session.username,
        "version": "5.3",
    }

    def publish(kind: str, content: dict[str, Any]) -> None:
        if "data" in content:
            content = {**content, "data": jsonutil.encode_images(content["data"])}
        session.send(socket, kind, jsonutil.json_clean(content), parent=parent, ident=kind.encode())

    return publish
