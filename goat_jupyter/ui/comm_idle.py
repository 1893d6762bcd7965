"""Widget comms while a cell awaits: an idle status after each comm message, and answer futures.

ipykernel 7.4 handles comm messages that arrive during an awaiting (async) cell concurrently and
publishes no busy/idle status for them. The ipywidgets frontend sends one value update at a time
and holds the next one until the kernel reports `idle` for the previous one, so without a status
only the first change of a Text/Dropdown/Checkbox ever reaches the kernel. `install` wraps the
kernel's handlers so every comm message handled during a running cell is followed by an `idle`
status for that message (then `busy` again for the cell, so the kernel indicator stays right).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from html import escape
from typing import Any, Generic, Protocol, TypeVar

from goat_jupyter.ui import pending, style
from goat_jupyter.ui.safe.markdown import no_math

T = TypeVar("T")
Handler = Callable[[Any, Any, dict[str, Any]], Any]
Bundle = dict[str, str]
_MARK = "_goat_comm_idle"
_log = logging.getLogger(__name__)


def ipywidgets() -> Any:
    """The ipywidgets module, imported on first use (slow to import, and untyped)."""
    import importlib

    return importlib.import_module("ipywidgets")


def on_click(button: Any, action: Callable[[], None]) -> None:
    """Run `action` when `button` is clicked (the button argument ipywidgets passes is not needed)."""

    def clicked(_button: Any) -> None:
        action()

    button.on_click(clicked)


def current_kernel() -> Any | None:
    """The ipykernel kernel running this code, or None outside one."""
    import sys

    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return None
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def install(kernel: Any) -> bool:
    """Wrap `kernel.shell_handlers` once (idempotent); True when this call installed the fix."""
    handlers: Any = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict):
        return False
    table: dict[str, Handler] = handlers  # pyright: ignore[reportUnknownVariableType]
    comm_msg = table.get("comm_msg")
    execute = table.get("execute_request")
    if comm_msg is None or execute is None or getattr(comm_msg, _MARK, False):
        return False
    running: list[dict[str, Any]] = []  # parents of the execute requests now in progress
    table["execute_request"] = _tracking(execute, running)
    table["comm_msg"] = _idle_after(kernel, comm_msg, running)
    return True


def is_installed(kernel: Any) -> bool:
    handlers: Any = getattr(kernel, "shell_handlers", None)
    return isinstance(handlers, dict) and bool(getattr(handlers.get("comm_msg"), _MARK, False))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


def _tracking(handler: Handler, running: list[dict[str, Any]]) -> Handler:
    async def execute_request(stream: Any, ident: Any, parent: dict[str, Any]) -> None:
        # Comm messages are handled on the main shell, so only its cells make them concurrent.
        on_main_shell = parent.get("header", {}).get("subshell_id") is None
        if on_main_shell:
            running.append(parent)
        try:
            result = handler(stream, ident, parent)
            if inspect.isawaitable(result):
                await result
        finally:
            if on_main_shell:
                _discard(running, parent)

    return execute_request


def _discard(items: list[dict[str, Any]], item: dict[str, Any]) -> None:
    for index, value in enumerate(items):
        if value is item:
            del items[index]
            return


def _idle_after(kernel: Any, handler: Handler, running: list[dict[str, Any]]) -> Handler:
    def publish(msg: dict[str, Any]) -> None:
        if not running:
            return  # not during a cell: ipykernel publishes busy/idle itself
        try:
            kernel._publish_status("idle", "shell", parent=msg)
            kernel._publish_status("busy", "shell", parent=running[-1])
        except Exception:
            _log.debug("goat: could not publish the comm idle status", exc_info=True)

    def comm_msg(stream: Any, ident: Any, msg: dict[str, Any]) -> Any:
        try:
            result = handler(stream, ident, msg)
        except BaseException:
            publish(msg)
            raise
        if inspect.isawaitable(result):
            return _then(result, lambda: publish(msg))
        publish(msg)
        return result

    setattr(comm_msg, _MARK, True)
    return comm_msg


async def _then(result: Awaitable[Any], after: Callable[[], None]) -> Any:
    try:
        return await result
    finally:
        after()


class Answer(Generic[T]):
    """A one-shot answer from widget callbacks: set from any thread, awaited on the cell's loop."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[T] = self._loop.create_future()

    def set(self, value: T) -> None:
        """Resolve with `value` unless already resolved; safe from callbacks on other threads."""
        self._loop.call_soon_threadsafe(self._resolve, value)

    def _resolve(self, value: T) -> None:
        if not self._future.done():
            self._future.set_result(value)

    @property
    def done(self) -> bool:
        return self._future.done()

    async def wait(self) -> T:
        """Wait with no timeout; cancelling the waiter (the stop button) cancels the answer."""
        return await self._future


class HandleLike(Protocol):
    def update(self, obj: Any, /, *, raw: bool = False) -> None: ...


Show = Callable[[Any], "HandleLike | None"]


NO_WIDGETS_HINT = (
    "(waiting for an answer in the cell's buttons; if they do not show, this frontend cannot display "
    "widgets: press stop / interrupt the kernel, then set GOAT_INTERACTIVE=0 or add allow rules)"
)


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
OFFLINE_NOTE = "(These buttons work only while the kernel that showed them runs.)"


class WidgetView:
    """A widget with text/html and text/plain fallbacks: nbconvert, a reopened notebook without its
    kernel and frontends without widgets show a sentence, never a widget repr.

    `kind` goes into the output's metadata (`goat.widget`) so the labextension can drop the widget
    view of a notebook opened from disk, where its kernel-side model is gone for good.
    """

    def __init__(
        self,
        widget: Any,
        text: str,
        *,
        html: str = "",
        hint: str = NO_WIDGETS_HINT,
        kind: str = "prompt",
        key: str = "",
    ) -> None:
        self.widget = widget
        self.text = text
        self.html = html
        self.hint = hint
        self.kind = kind
        self.key = key

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = f"{self.text} {self.hint}".strip()
        html = self.html or f'<div style="{style.NOTE}">{escape(self.text)}</div>'
        bundle["text/html"] = html + f'<div style="{style.NOTE}">{escape(OFFLINE_NOTE)}</div>'
        marker = {"widget": self.kind, "model": model_id(self.widget)}
        if self.key:
            marker["key"] = self.key
        return bundle, {"goat": marker}


def model_id(widget: Any) -> str:
    return str(getattr(widget, "model_id", "") or "")


async def show_until_answered(
    show: Show,
    view: Any,
    answer: Answer[T],
    record: Callable[[T], Bundle],
    cancelled: Bundle,
    waiting: str = "goat is waiting for you",
) -> T:
    """Show `view`, wait for its answer, then replace it with a plain record (also when cancelled)."""
    shown = view if isinstance(view, WidgetView) else WidgetView(view, waiting)
    view = shown.widget
    handle = show(shown)
    keep_pending(view, handle, shown.text)
    try:
        value = await answer.wait()
    except asyncio.CancelledError:
        retire(view, handle, cancelled)
        raise
    retire(view, handle, record(value))
    return value


def keep_pending(widget: Any, handle: HandleLike | None, text: str) -> None:
    """List the prompt for a tab that reloads before it is answered (see `ui.pending`)."""
    display_id = getattr(handle, "display_id", None)
    if model_id(widget) and isinstance(display_id, str):
        pending.add(pending.PendingPrompt(model_id(widget), display_id, text))


def retire(view: Any, handle: HandleLike | None, bundle: Bundle) -> None:
    """Disable the widgets, put the record in their place and close their comms."""
    widgets = list(_tree(view))
    for widget in widgets:
        if hasattr(widget, "disabled"):
            widget.disabled = True
    pending.discard(model_id(view))
    if handle is not None:
        handle.update(bundle, raw=True)
    for widget in widgets:
        widget.close()


def _tree(widget: Any) -> list[Any]:
    found: list[Any] = []
    for child in getattr(widget, "children", ()):
        found.extend(_tree(child))
    return [*found, widget]


def record_bundle(
    glyph: str, color: str, text: str, *, details_html: str = "", details_text: str = "", summary: str = ""
) -> Bundle:
    """A one-line HTML + text record that stays readable in a saved notebook without widget state;
    `details_*` (what was decided on: the diff, the command, the cell) go in a folded block below."""
    stamp = time.strftime("%H:%M:%S")
    details = ""
    if details_html:
        label = escape(summary or "details")
        details = f'<details><summary style="{style.SUMMARY}">{label}</summary>{details_html}</details>'
    html = (
        f'<div style="{style.RECORD.format(color=color)}">'
        f'<span style="color:{color}">{glyph}</span> {escape(text)} · {stamp}{details}</div>'
    )
    plain = f"{glyph} {text} · {stamp}"
    if details_text:
        plain += "\n" + "\n".join(f"    {line}" for line in details_text.splitlines())
    return no_math({"text/html": html, "text/plain": plain})
