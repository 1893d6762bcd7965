"""One RunCell's life in the notebook: [*] and live outputs in JupyterLab, the final outputs and
execution count written into the cell (live or in the .ipynb), also after a Stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from goat_jupyter.errors import GoatError, ToolExecutionError
from goat_jupyter.kernel.cell_echo import CardFeed, CellEcho, Pulse, SyncGate, iopub_publisher, new_run_id
from goat_jupyter.live import CellInfo, NotebookBackend
from goat_jupyter.live.live_notebook import LiveNotebook
from goat_jupyter.tools.base import ToolContext

PARTIAL_WRITE_S = 2.0  # after a Stop, how long the interrupted cell's outputs may take to land
Outputs = Sequence[Mapping[str, Any]]


@dataclass
class CellRun:
    """`run_id` is set when JupyterLab shows the run in the cell (its [*] and live outputs)."""

    backend: NotebookBackend
    cell: CellInfo
    feed: CardFeed
    gate: SyncGate
    echo: CellEcho | None = None
    run_id: str | None = None

    @classmethod
    async def start(cls, shell: Any, backend: NotebookBackend, cell: CellInfo, ctx: ToolContext) -> CellRun:
        """Ask JupyterLab to show the cell running; without it (a file, an older labextension) the
        outputs land when the run ends."""
        run = cls(backend, cell, CardFeed(lambda text: ctx.progress(output=text)), SyncGate())
        run_id = new_run_id()
        publish = iopub_publisher(shell, run_id) if isinstance(backend, LiveNotebook) else None
        if publish is None or not isinstance(backend, LiveNotebook):
            return run
        try:
            await backend.start_run(cell.id, run_id)
        except GoatError:  # a labextension without `run_started`: outputs arrive at the end
            return run
        run.echo, run.run_id = CellEcho(publish), run_id
        return run

    def pulse(self) -> Pulse:
        return Pulse(self.gate, self.echo, self.feed)

    async def finish(self, outputs: Outputs, count: int, *, model_text: str) -> None:
        """Write the outputs and count into the cell (and end its [*])."""
        try:
            await self._write(outputs, count)
        except GoatError as exc:
            raise ToolExecutionError(
                f"Cell {self.cell.id} ran, but its outputs could not be written into "
                f"{self.backend.path}: {exc.message}",
                output=model_text,
            ) from None

    async def finish_stopped(self, outputs: Outputs, count: int) -> None:
        """Best effort and bounded: a Stop must end the run even when the notebook does not answer
        (JupyterLab ends the [*] on its own when the %%goat cell ends)."""
        with contextlib.suppress(GoatError, asyncio.TimeoutError):
            await asyncio.wait_for(self._write(outputs, count), PARTIAL_WRITE_S)

    async def _write(self, outputs: Outputs, count: int) -> None:
        if self.echo is not None:
            self.echo.flush()
        if self.run_id is not None and isinstance(self.backend, LiveNotebook):
            await self.backend.finish_run(self.cell.id, self.run_id, outputs, count)
        else:
            await self.backend.set_outputs(self.cell.id, outputs, count)
        await self.backend.save()
