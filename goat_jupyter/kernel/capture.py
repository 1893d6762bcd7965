"""Run code in the kernel's user namespace from inside the running %%goat cell, capturing its outputs.

A %%goat cell is an awaiting async cell, so IPython's `run_cell` cannot be re-entered simply. The
code is compiled and run here instead (IPython's transforms, compiler cache and tracebacks). What
it prints or displays is routed by a context variable: only the task running the code (and tasks
it starts) is captured; the goat transcript and everything else still reach the cell as usual.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import inspect
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import CodeType, FrameType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from IPython.core.displaypub import DisplayPublisher

if TYPE_CHECKING:
    from goat_jupyter.kernel.cell_echo import SyncGate

T = TypeVar("T")
Output = dict[str, Any]
Echo = Callable[[str, Mapping[str, Any]], None]
_SINK: contextvars.ContextVar[OutputSink | None] = contextvars.ContextVar("goat_output_sink", default=None)
_installed = 0


class OutputSink:
    """Collects nbformat outputs: merged streams, displays (with updates by display id), results, errors."""

    def __init__(
        self,
        on_text: Callable[[str], None] | None = None,
        *,
        echo: Echo | None = None,
        gate: SyncGate | None = None,
    ) -> None:
        self.outputs: list[Output] = []
        self.on_text = on_text
        self.echo = echo  # each output as an IOPub message kind and content, as it happens
        self.gate = gate  # marks where the code runs synchronously (cell_echo.Pulse)
        self._by_display_id: dict[str, Output] = {}
        self._clear_on_next = False

    def synchronous(self) -> AbstractContextManager[None]:
        return nullcontext() if self.gate is None else self.gate.inside()

    def _echo(self, kind: str, content: Mapping[str, Any]) -> None:
        if self.echo is not None:
            self.echo(kind, content)

    def stream(self, name: str, text: str) -> None:
        self._pending_clear()
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})
        self._echo("stream", {"name": name, "text": text})
        if self.on_text is not None:
            self.on_text(text)

    def display(
        self,
        data: Mapping[str, Any],
        metadata: Mapping[str, Any] | None,
        display_id: str | None,
        update: bool,
    ) -> None:
        shown_data = {"data": dict(data), "metadata": dict(metadata or {})}
        transient = {"display_id": display_id} if display_id else {}
        if update:
            shown = self._by_display_id.get(display_id or "")
            if shown is not None:
                shown.update(shown_data)
                self._echo("update_display_data", {**shown_data, "transient": transient})
            return
        self._pending_clear()
        output: Output = {"output_type": "display_data", **shown_data}
        self.outputs.append(output)
        if display_id:
            self._by_display_id[display_id] = output
        self._echo("display_data", {**shown_data, "transient": transient})

    def result(self, data: Mapping[str, Any], metadata: Mapping[str, Any], count: int | None) -> None:
        self._pending_clear()
        content = {"execution_count": count, "data": dict(data), "metadata": dict(metadata)}
        self.outputs.append({"output_type": "execute_result", **content})
        self._echo("execute_result", content)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self._pending_clear()
        content = {"ename": ename, "evalue": evalue, "traceback": traceback}
        self.outputs.append({"output_type": "error", **content})
        self._echo("error", content)

    def clear(self, wait: bool) -> None:
        self._echo("clear_output", {"wait": wait})
        self._drop(wait)

    def _drop(self, wait: bool) -> None:
        if wait:
            self._clear_on_next = True
        else:
            self.outputs.clear()
            self._by_display_id.clear()

    def first_error(self) -> Output | None:
        return next((o for o in self.outputs if o["output_type"] == "error"), None)

    def _pending_clear(self) -> None:
        if self._clear_on_next:  # the frontend clears on its own (it got clear_output with wait)
            self._clear_on_next = False
            self._drop(wait=False)


class _RoutedStream:
    """Stands in for sys.stdout/sys.stderr: writes from a capturing task go to its sink."""

    def __init__(self, name: str, original: Any) -> None:
        self.stream_name = name
        self.original = original

    def write(self, text: str) -> int:
        sink = _SINK.get()
        if sink is None:
            return cast(int, self.original.write(text))
        sink.stream(self.stream_name, text)
        return len(text)

    def flush(self) -> None:
        self.original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _RoutedPublisher(DisplayPublisher):
    """Stands in for the shell's display publisher: displays from a capturing task go to its sink."""

    _original: Any  # the kernel's publisher (ipykernel's ZMQDisplayPublisher in a kernel)

    def __init__(self, original: Any) -> None:
        super().__init__()  # pyright: ignore[reportUnknownMemberType]
        self._original = original

    def publish(self, data: Any, metadata: Any = None, source: Any = None, **kwargs: Any) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        sink = _SINK.get()
        if sink is None:
            self._original.publish(data, metadata, **kwargs)
            return
        transient: dict[str, Any] = kwargs.get("transient") or {}
        sink.display(data, metadata, transient.get("display_id"), bool(kwargs.get("update")))

    def clear_output(self, wait: bool = False) -> None:
        sink = _SINK.get()
        if sink is None:
            self._original.clear_output(wait)
        else:
            sink.clear(wait)

    def __getattr__(self, name: str) -> Any:
        original = vars(self).get("_original")
        if original is None:
            raise AttributeError(name)
        return getattr(original, name)


@contextmanager
def _routing(shell: Any) -> Generator[None, None, None]:
    """Install the routers while any capture runs (nested captures share them)."""
    global _installed
    if _installed == 0:
        sys.stdout = _RoutedStream("stdout", sys.stdout)
        sys.stderr = _RoutedStream("stderr", sys.stderr)
        shell.display_pub = _RoutedPublisher(shell.display_pub)
    _installed += 1
    try:
        yield
    finally:
        _installed -= 1
        if _installed == 0:
            _uninstall(shell)


def _uninstall(shell: Any) -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, _RoutedStream):
            setattr(sys, name, stream.original)
    if isinstance(shell.display_pub, _RoutedPublisher):
        shell.display_pub = shell.display_pub._original  # pyright: ignore[reportPrivateUsage]


async def captured(shell: Any, sink: OutputSink, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` in a task whose output (and its child tasks' output) goes to `sink`."""
    context = contextvars.copy_context()
    context.run(_SINK.set, sink)
    with _routing(shell):
        task: asyncio.Future[T] = context.run(asyncio.ensure_future, work())
        return await task


@contextmanager
def interruptible() -> Generator[None, None, None]:
    """Let Stop reach user code that blocks the loop (a `time.sleep` loop): ipykernel's handler only
    schedules the cell's cancellation on the loop, which a blocking cell never yields to. While the
    agent's code runs synchronously, SIGINT raises KeyboardInterrupt inside it, as in a plain cell;
    at any other moment (the code awaits, the agent waits) ipykernel's handler runs as before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if _runs_user_code(frame):
            raise KeyboardInterrupt
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _runs_user_code(frame: FrameType | None) -> bool:
    """Whether `_run` is on the stack: a KeyboardInterrupt raised here then unwinds into our handlers
    (never into the event loop, which it would stop)."""
    while frame is not None:
        if frame.f_code is _run.__code__:
            return True
        frame = frame.f_back
    return False


async def run_source(shell: Any, source: str, sink: OutputSink, count: int | None) -> None:
    """Execute a cell's source like IPython would; outputs and any exception end up in `sink`."""
    filename = "<goat RunCell>"
    try:
        code_text: str = shell.transform_cell(source)
        filename = shell.compile.cache(code_text, count or 0, raw_code=source)
        module = shell.transform_ast(ast.parse(code_text, filename=filename))
        body, last = _split_last_expression(module)
        flags = shell.compile.flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        if body:
            await _run(_compile(ast.Module(body=body, type_ignores=[]), filename, "exec", flags), shell)
        if last is not None:
            value = await _run(_compile(ast.Expression(last.value), filename, "eval", flags), shell)
            if value is not None and not source.rstrip().endswith(";"):
                data, metadata = shell.display_formatter.format(value)
                sink.result(data, metadata, count)
    except SyntaxError as exc:
        sink.error(type(exc).__name__, str(exc), shell.SyntaxTB.structured_traceback(type(exc), exc, []))
    except KeyboardInterrupt as exc:
        sink.error("KeyboardInterrupt", "", _traceback(shell, exc, filename))
        raise asyncio.CancelledError from None
    except Exception as exc:  # the user's code failed: that is an output, as in a notebook
        sink.error(type(exc).__name__, str(exc), _traceback(shell, exc, filename))


async def evaluate(shell: Any, expression: str) -> object:
    """The value of one expression in the user namespace (SyntaxError for anything else)."""
    flags = shell.compile.flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = _compile(expression, "<KernelInspect>", "eval", flags)
    try:
        return await _run(code, shell)
    except KeyboardInterrupt:  # Stop while the expression blocked: end like a cancelled await
        raise asyncio.CancelledError from None


def _compile(source: str | ast.Module | ast.Expression, filename: str, mode: str, flags: int) -> CodeType:
    return cast(CodeType, compile(source, filename, mode, flags, dont_inherit=True))


async def _run(code: CodeType, shell: Any) -> object:
    sink = _SINK.get()
    with nullcontext() if sink is None else sink.synchronous():
        result = eval(code, shell.user_global_ns, shell.user_ns)
    if code.co_flags & inspect.CO_COROUTINE:
        result = await result
    return cast(object, result)


def _split_last_expression(module: ast.Module) -> tuple[list[ast.stmt], ast.Expr | None]:
    body = list(module.body)
    if body and isinstance(body[-1], ast.Expr):
        return body[:-1], body[-1]
    return body, None


def _traceback(shell: Any, exc: BaseException, filename: str) -> list[str]:
    """IPython's coloured traceback, from the cell's own frame to where it stopped: not goat's frames
    above the cell, nor the SIGINT handler (`interruptible`) that raised a Stop's KeyboardInterrupt."""
    tb: TracebackType | None = exc.__traceback__
    start = tb
    while start is not None and start.tb_frame.f_code.co_filename != filename:
        start = start.tb_next
    _drop_own_tail(start)
    return list(shell.InteractiveTB.structured_traceback(type(exc), exc, start or tb, tb_offset=0))


def _drop_own_tail(tb: TracebackType | None) -> None:
    """Cut the traceback's innermost entries that are this module's own frames."""
    last_foreign: TracebackType | None = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != __file__:
            last_foreign = tb
        tb = tb.tb_next
    if last_foreign is not None:
        last_foreign.tb_next = None
