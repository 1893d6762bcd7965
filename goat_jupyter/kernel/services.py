"""The "kernel" service: RunCell and KernelInspect against this kernel's user namespace."""

from __future__ import annotations

import asyncio
import base64
import binascii
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from goat_jupyter.checkpoints.namespace import NamespaceChange
from goat_jupyter.errors import GoatError, InvalidInputError, ToolExecutionError
from goat_jupyter.kernel.executions import bound_names, record, snapshot
from goat_jupyter.kernel.kernel_state import binding_notes, own_cells
from goat_jupyter.kernel.namespace_undo import keep_for_revert
from goat_jupyter.kernel.variables import user_variables
from goat_jupyter.live import CellInfo, cell_label, find_cell
from goat_jupyter.represent import output_text, represent
from goat_jupyter.text import cut_middle
from goat_jupyter.tools.base import Attachment, ToolContext, ToolOutput
from goat_jupyter.tools.files import prepare_image
from goat_jupyter.tools.notebook import (
    address,
    check_at_run,
    choose_backend,
    notebook_service,
    resolve_notebook,
    strip_ansi,
)

if TYPE_CHECKING:
    from goat_jupyter.kernel.capture import Output, OutputSink
    from goat_jupyter.tools.notebook.kernel_inspect import KernelInspectInput
    from goat_jupyter.tools.notebook.run_cell import RunCellInput

MAX_IMAGES = 10
MAX_IMAGE_SIDE = 1024  # cell outputs (plots) reach the model at most this many pixels on the long side
MAX_ERROR_OUTPUT_CHARS = 28_000  # like Bash: head and tail of long output
_IMAGE_KINDS = ("image/png", "image/jpeg", "image/gif", "image/webp")


class KernelService:
    """Runs code in `shell` (the kernel's IPython shell) for the RunCell and KernelInspect tools."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    async def run_cell(self, args: RunCellInput, ctx: ToolContext) -> ToolOutput:
        from goat_jupyter.kernel.capture import OutputSink, captured, interruptible
        from goat_jupyter.kernel.cell_run import CellRun

        path = await self._notebook_path(args.notebook_path, ctx)
        backend = await choose_backend(path, ctx)
        if not backend.live:
            ctx.session.file_reads.check_writable(path)
        cell = self._runnable(find_cell(await backend.list_cells(), args.cell_id, where=str(path)), ctx)
        check_at_run("run", address(args.notebook_path, args.cell_id), cell, ctx)
        count = self._next_execution_count()
        run = await CellRun.start(self.shell, backend, cell, ctx)
        sink = OutputSink(on_text=run.feed.on_text, echo=run.echo, gate=run.gate)
        before = snapshot(self.shell.user_ns)
        kept = keep_for_revert(self.shell.user_ns, cell.source, f"RunCell {cell_label(cell)}", ctx)
        try:
            with interruptible(), run.pulse():
                await captured(self.shell, sink, lambda: self._run_drawing(cell.source, sink, count))
        except asyncio.CancelledError:  # Stop: the cell keeps what it printed up to the interrupt
            self._record(cell, count, before, kept)
            await run.finish_stopped(sink.outputs, count)
            raise
        self._record(cell, count, before, kept)
        text, attachments = outputs_for_model(sink.outputs)
        await run.finish(sink.outputs, count, model_text=text)
        if not backend.live:
            ctx.session.file_reads.record(path)
        where = f"{cell_label(cell)} of {path}"
        failed = sink.first_error()
        if failed is not None:
            raise ToolExecutionError(
                f"Running {where} raised {failed['ename']}: {failed['evalue']}. Its outputs are in the cell:",
                output=cut_middle(text, MAX_ERROR_OUTPUT_CHARS),  # error results skip the executor's bounding
            )
        meta = {
            "notebook_path": str(path),
            "cell_id": cell.id,
            "execution_count": count,
            "live": backend.live,
        }
        body = text or "(the cell produced no output)"
        return ToolOutput(
            f"Ran {where} as execution [{count}]. Outputs:\n{body}", metadata=meta, attachments=attachments
        )

    async def target_cell(self, args: RunCellInput, ctx: ToolContext) -> CellInfo:
        """The cell RunCell would run for `args` (its source and tags are what permission rules name)."""
        path = await self._notebook_path(args.notebook_path, ctx)
        backend = await choose_backend(path, ctx)
        return find_cell(await backend.list_cells(), args.cell_id, where=str(path))

    def _record(
        self, cell: CellInfo, count: int, before: dict[str, int], kept: NamespaceChange | None
    ) -> None:
        names = bound_names(before, self.shell.user_ns, cell.source)
        record(cell.id, count, cell.source, names, by_agent=True)
        if kept is not None:
            kept.settle()

    async def _run_drawing(self, source: str, sink: OutputSink, count: int) -> None:
        """Run the source, then publish the figures it drew as its own outputs (not the %%goat cell's)."""
        from goat_jupyter.kernel.capture import run_source
        from goat_jupyter.kernel.figures import flush_figures, open_figures

        before = open_figures()
        await run_source(self.shell, source, sink, count)
        flush_figures(sink, before)

    async def inspect(self, args: KernelInspectInput, ctx: ToolContext) -> ToolOutput:
        from goat_jupyter.kernel.capture import OutputSink, captured, evaluate, interruptible

        sink = OutputSink()
        kept = keep_for_revert(
            self.shell.user_ns, args.expression, f"KernelInspect {args.expression[:60]}", ctx
        )
        try:
            with interruptible():
                value = await captured(self.shell, sink, lambda: evaluate(self.shell, args.expression))
        except SyntaxError as exc:
            raise InvalidInputError(
                f"{args.expression!r} is not a Python expression ({exc.msg}). KernelInspect evaluates one "
                "expression; to run statements, put them in a cell and use RunCell."
            ) from None
        except Exception as exc:  # the expression failed in the user's namespace
            raise ToolExecutionError(
                f"Evaluating {args.expression!r} raised {type(exc).__name__}: {exc}"
            ) from None
        finally:
            if kept is not None:
                kept.settle()
        text = represent(value)
        notes = await self._binding_notes(args.expression, ctx)
        if notes:
            text += "\n\n" + "\n".join(notes)
        printed, _ = outputs_for_model(sink.outputs)
        if printed:
            text += f"\n\nOutput while evaluating:\n{printed}"
        return ToolOutput(text, metadata={"expression": args.expression, "type": type(value).__name__})

    def variables(self) -> list[str]:
        if self.shell is None:  # a service without a kernel (tests of the tool offer)
            return []
        return user_variables(self.shell.user_ns, getattr(self.shell, "user_ns_hidden", {}))

    async def _binding_notes(self, expression: str, ctx: ToolContext) -> list[str]:
        """Which execution last bound each name the expression reads (and if its cell changed since)."""
        log = ctx.services.executions
        if log is None or not log.records:
            return []
        from_cells = any(r.cell_id for r in log.records)  # else no cell can have changed since
        cells = await own_cells(ctx.services, ctx.session) if from_cells else None
        return binding_notes(log, expression, cells)

    async def _notebook_path(self, raw: str | None, ctx: ToolContext) -> Path:
        path = await resolve_notebook(raw, ctx)
        if path is None:
            raise InvalidInputError(
                "Which notebook? This kernel's notebook is not known here: give notebook_path."
            )
        return path

    def _runnable(self, cell: CellInfo, ctx: ToolContext) -> CellInfo:
        service = notebook_service(ctx)
        if cell.cell_type != "code":
            raise InvalidInputError(f"Cell {cell.id} is a {cell.cell_type} cell; only code cells can run.")
        if cell.source.lstrip().startswith("%%goat") or (service and cell.id == service.running_cell_id):
            raise InvalidInputError(
                f"Cell {cell.id} is a %%goat cell; running it from here would start goat inside itself."
            )
        return cell

    def _next_execution_count(self) -> int:
        """A number after the running %%goat cell's own: that cell keeps its number (its reply is
        counted from the shell's counter), and once its reply is out the counter skips the numbers
        used here, so the next cell the user runs does not repeat one."""
        self._reserved = max(getattr(self, "_reserved", 0), int(self.shell.execution_count)) + 1
        if not getattr(self, "_skip_hooked", False):
            self._skip_hooked = True
            self.shell.events.register("post_run_cell", self._skip_used_counts)
        return self._reserved

    def _skip_used_counts(self, *_: Any) -> None:
        """After the cell ends: move the counter past the numbers RunCell used (after the reply is sent)."""
        self.shell.events.unregister("post_run_cell", self._skip_used_counts)
        self._skip_hooked = False
        used = self._reserved

        def skip() -> None:
            self.shell.execution_count = max(int(self.shell.execution_count), used + 1)

        asyncio.get_running_loop().call_soon(skip)


def outputs_for_model(outputs: list[Output]) -> tuple[str, list[Attachment]]:
    """The outputs as text (streams, results as text/plain, errors) plus images as attachments."""
    parts: list[str] = []
    images: list[Attachment] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(f"[{output.get('name', 'stdout')}]\n{strip_ansi(str(output.get('text', '')))}")
        elif kind == "error":
            lines = cast(list[object], output.get("traceback") or [])
            traceback = strip_ansi("\n".join(str(line) for line in lines))
            parts.append(f"[error] {output.get('ename')}: {output.get('evalue')}\n{traceback}")
        else:
            label = "[result]" if kind == "execute_result" else "[display]"
            parts.append(f"{label}\n{_data_text(output.get('data') or {}, images)}")
    return "\n".join(parts), images


def _data_text(data: dict[str, Any], images: list[Attachment]) -> str:
    pieces: list[str] = []
    for mime in _IMAGE_KINDS:
        if mime in data:
            pieces.append(_image(str(data[mime]), mime, images))
    text = output_text(data)  # the output's own text/llm+plain before its text/plain
    if text is not None:
        pieces.append(strip_ansi(text))
    return "\n".join(pieces) or f"(output with {', '.join(data) or 'no data'})"


def _image(value: str, mime: str, images: list[Attachment]) -> str:
    if len(images) >= MAX_IMAGES:
        return f"({mime} not attached: {MAX_IMAGES} images already attached)"
    try:
        shown = prepare_image(base64.b64decode("".join(value.split()), validate=True), MAX_IMAGE_SIDE)
    except (binascii.Error, ValueError, GoatError):
        return f"({mime} output that could not be decoded)"
    images.append(shown.attachment(f"Cell output image {len(images) + 1}: {shown.describe()}"))
    return f"(image {len(images)}: {shown.describe()}, attached)"


def kernel_service() -> KernelService | None:
    """The service for the IPython shell running this code; None outside IPython."""
    if "IPython" not in sys.modules:
        return None
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    return None if shell is None else KernelService(shell)
