"""RunCell and KernelInspect from the server: the notebook's kernel (found through the server's
sessions) is driven by a kernel client of the server, as a second frontend; the tab is told to show
the run ([*], streamed outputs) through the bridge's `run_started` / `run_finished`."""

from __future__ import annotations

import ast
import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from goat_jupyter.errors import InvalidInputError, NotAvailableError, ToolTimeoutError
from goat_jupyter.kernel.run_outputs import RunOutputs
from goat_jupyter.kernel.services import outputs_for_model
from goat_jupyter.live import CellInfo, NotebookBackend, cell_label, find_cell
from goat_jupyter.live.live_notebook import LiveNotebook
from goat_jupyter.mcp_server.paths import relative
from goat_jupyter.represent import output_text
from goat_jupyter.text import cut_middle
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.notebook import address, check_at_run, choose_backend

RUN_TIMEOUT_S = 600.0
INSPECT_CHARS = 20_000


class Sessions(Protocol):
    """jupyter_server's SessionManager, as far as used here."""

    async def list_sessions(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class OpenKernel:
    path: str  # relative to the server's root
    kernel_id: str
    name: str
    state: str


class ServerKernels:
    """The kernels this Jupyter server runs for notebooks, and the one behind a notebook path."""

    def __init__(self, sessions: Sessions, kernel_manager: Any, root: Path) -> None:
        self.sessions, self.kernel_manager, self.root = sessions, kernel_manager, root

    async def listing(self) -> list[OpenKernel]:
        found: list[OpenKernel] = []
        for session in await self.sessions.list_sessions():
            kernel = cast("dict[str, Any]", session.get("kernel") or {})
            if session.get("type", "notebook") == "notebook" and kernel.get("id"):
                found.append(
                    OpenKernel(
                        str(session.get("path", "")),
                        str(kernel["id"]),
                        str(kernel.get("name", "")),
                        str(kernel.get("execution_state", "")),
                    )
                )
        return found

    async def kernel_for(self, path: Path) -> str:
        name = relative(self.root, path)
        for kernel in await self.listing():
            if kernel.path == name:
                return kernel.kernel_id
        raise NotAvailableError(
            f"{name} has no running kernel. Open it in JupyterLab (or start its kernel) and call again."
        )

    async def interrupt(self, path: Path) -> str:
        kernel_id = await self.kernel_for(path)
        await _maybe_await(self.kernel_manager.interrupt_kernel(kernel_id))
        return kernel_id

    def client(self, kernel_id: str) -> Any:
        client: Any = self.kernel_manager.get_kernel(kernel_id).client()
        client.start_channels()
        return client


async def _maybe_await(value: object) -> object:
    return await cast("Any", value) if asyncio.iscoroutine(value) or asyncio.isfuture(value) else value


class ServerKernelAccess:
    """KernelAccess for the MCP server's sessions (tools/context.py)."""

    def __init__(self, kernels: ServerKernels) -> None:
        self.kernels = kernels

    async def target_cell(self, args: Any, ctx: ToolContext) -> CellInfo:
        path = ctx.resolve_path(str(args.notebook_path))
        backend = await choose_backend(path, ctx)
        cell = find_cell(await backend.list_cells(), args.cell_id, where=str(path))
        if cell.cell_type != "code":
            raise InvalidInputError(f"Cell {cell.id} is a {cell.cell_type} cell; only code cells can run.")
        return cell

    async def run_cell(self, args: Any, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve_path(str(args.notebook_path))
        backend = await choose_backend(path, ctx)
        cell = await self.target_cell(args, ctx)
        check_at_run("run", address(args.notebook_path, args.cell_id), cell, ctx)
        kernel_id = await self.kernels.kernel_for(path)
        client = self.kernels.client(kernel_id)
        try:
            run = _Run(client, cell)
            if isinstance(backend, LiveNotebook):
                await backend.start_run(cell.id, run.msg_id)
            run.send()
            try:
                outputs, count = await run.collect(lambda: self.kernels.interrupt(path))
            finally:
                await _record(backend, cell, run, ctx)
        finally:
            client.stop_channels()
        text, images = outputs_for_model(outputs)
        head = f"Ran {cell_label(cell)} of {path} in its kernel as execution [{count}]."
        where = "" if backend.live else " (the notebook is not open in JupyterLab: the file was updated)"
        return ToolOutput(f"{head}{where}\n{text}".rstrip(), attachments=images, metadata={"count": count})

    def variables(self) -> list[str]:
        """Code style's first look: not offered to outside agents, which read for themselves."""
        return []

    async def inspect(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """The value as goat's KernelInspect describes it (`_repr_llm_`, goat's summariser, a bounded
        repr), evaluated as a user expression: no history, no execution count, no output. A kernel
        without goat_jupyter gives the value's own text representation."""
        path = ctx.resolve_path(str(args.notebook_path))
        client = self.kernels.client(await self.kernels.kernel_for(path))
        try:
            found = await _evaluate(client, SUMMARY_EXPRESSION.format(expression=args.expression))
            if _no_goat(found):
                found = await _evaluate(client, str(args.expression))
        finally:
            client.stop_channels()
        if found.get("status") != "ok":
            return ToolOutput(f"Error: {found.get('ename')}: {found.get('evalue')}", is_error=True)
        text = _summary_text(found) or "(no text representation)"
        return ToolOutput(cut_middle(f"{args.expression} =\n{text}", INSPECT_CHARS))


# The expression stays on lines of its own, so a trailing comment cannot swallow the closing brackets.
SUMMARY_EXPRESSION = (
    "__import__('goat_jupyter.represent', fromlist=['represent']).represent((\n{expression}\n))"
)


async def _evaluate(client: Any, expression: str) -> dict[str, Any]:
    reply = await client.execute_interactive(
        "",
        silent=True,
        store_history=False,
        user_expressions={"value": expression},
        timeout=60,
        output_hook=lambda msg: None,  # pyright: ignore[reportUnknownLambdaType]
    )
    return cast("dict[str, Any]", reply["content"].get("user_expressions", {})).get("value", {})


def _no_goat(found: dict[str, Any]) -> bool:
    return found.get("ename") == "ModuleNotFoundError" and "goat_jupyter" in str(found.get("evalue"))


def _summary_text(found: dict[str, Any]) -> str:
    """goat's summary comes back as the repr of a str; anything else is the value's own text."""
    text = output_text(cast("dict[str, Any]", found.get("data") or {})) or ""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def outputs_or_empty(run: _Run) -> list[dict[str, Any]]:
    return [shown.output for shown in run.outputs.shown]


async def _record(backend: NotebookBackend, cell: CellInfo, run: _Run, ctx: ToolContext) -> None:
    """The tab ends its [*] with the final outputs (also after a Stop); without a tab the file gets
    them, and the session knows the file as written (the next edit needs no second Read)."""
    outputs = outputs_or_empty(run)
    if isinstance(backend, LiveNotebook):
        await backend.finish_run(cell.id, run.msg_id, outputs, run.count or 0)
        return
    await backend.set_outputs(cell.id, outputs, run.count)
    await backend.save()
    if ctx.session.file_reads.was_read(backend.path):
        ctx.session.file_reads.record(backend.path)


class _Run:
    """One execute_request of the cell's source and the outputs its IOPub messages build."""

    def __init__(self, client: Any, cell: CellInfo) -> None:
        self.client = client
        content: dict[str, Any] = {
            "code": cell.source,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        self.message: dict[str, Any] = client.session.msg("execute_request", content)
        self.message["metadata"]["cellId"] = cell.id
        self.msg_id = str(self.message["header"]["msg_id"])
        self.outputs = RunOutputs()
        self.count: int | None = None

    def send(self) -> None:
        self.client.shell_channel.send(self.message)

    async def collect(self, interrupt: Any) -> tuple[list[dict[str, Any]], int | None]:
        """IOPub until the kernel is idle for this request; a cancelled call interrupts the kernel."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        try:
            while not await self._next(deadline):
                pass
        except asyncio.CancelledError:
            await interrupt()
            raise
        return outputs_or_empty(self), self.count

    async def _next(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ToolTimeoutError(f"The cell ran longer than {RUN_TIMEOUT_S:g} s; interrupt it with Stop.")
        try:
            msg: dict[str, Any] = await self.client.get_iopub_msg(timeout=min(left, 1.0))
        except Exception:  # queue.Empty: nothing yet
            return False
        if msg.get("parent_header", {}).get("msg_id") != self.msg_id:
            return False
        kind, content = str(msg["header"]["msg_type"]), cast("dict[str, Any]", msg["content"])
        if kind == "execute_input":
            self.count = int(content.get("execution_count") or 0) or None
        elif kind == "status":
            return content.get("execution_state") == "idle"
        elif kind == "error" or kind in (
            "stream",
            "display_data",
            "execute_result",
            "clear_output",
            "update_display_data",
        ):
            self.outputs.apply(kind, content)
        return False
