"""Around each %%goat run: the notebook bridge's per-run state, the checkpoint, "Revert this run", %goat undo."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from html import escape
from typing import Any, cast

from goat_jupyter.checkpoints.store import Checkpoints, RevertReport, RunCheckpoint
from goat_jupyter.errors import GoatError
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.tools.events import Notice
from goat_jupyter.ui import CellRenderer, Renderer, style
from goat_jupyter.ui.approval import who
from goat_jupyter.ui.comm_idle import Bundle, WidgetView, current_kernel, ipywidgets, on_click, record_bundle
from goat_jupyter.ui.interaction import detect_interaction
from goat_jupyter.ui.summary import relative

REVERT_LABEL = "Revert this run"
_log = logging.getLogger(__name__)
_reverts: set[asyncio.Task[None]] = set()  # keeps click-started reverts alive until they finish


def checkpoints_of(goat: GoatRuntime) -> Checkpoints:
    found = goat.services.checkpoints
    if not isinstance(found, Checkpoints):
        found = goat.services.checkpoints = Checkpoints()
    return found


def running_cell() -> tuple[str | None, bool]:
    """The running cell's id (JupyterLab's metadata.cellId) and whether a frontend could answer."""
    kernel = current_kernel()
    try:
        parent = cast(dict[str, Any], kernel.get_parent("shell") if kernel is not None else {})
        metadata = cast(dict[str, Any], parent.get("metadata") or {})
        content = cast(dict[str, Any], parent.get("content") or {})
        cell_id: object = metadata.get("cellId")
        allow_stdin = bool(content.get("allow_stdin"))
    except Exception:  # no parent yet, or an unexpected message shape
        return None, False
    cell = cell_id if isinstance(cell_id, str) and cell_id else None
    return cell, cell is not None or allow_stdin


@asynccontextmanager
async def run_scope(
    goat: GoatRuntime, renderer: Renderer, prompt: str
) -> AsyncGenerator[RunCheckpoint, None]:
    """Record the run's changes; afterwards offer to revert them (a button, or a hint when headless)."""
    checkpoints = checkpoints_of(goat)
    service = goat.services.bridge
    if service is not None:
        cell_id, probe = running_cell()

        def notify(text: str) -> None:
            renderer.handle(Notice(text, "warning"))

        service.begin_run(running_cell_id=cell_id, probe=probe, notify=notify, prompt=prompt)
    run = checkpoints.begin(" ".join(prompt.split())[:60])
    try:
        yield run
    finally:
        checkpoints.end()
        if service is not None:
            service.end_run()
        if run.changed:
            offer_revert(goat, run, renderer)


def offer_revert(goat: GoatRuntime, run: RunCheckpoint, renderer: Renderer) -> None:
    if isinstance(renderer, CellRenderer) and detect_interaction(current_kernel()).kind == "widgets":
        button = RevertButton(goat, run, running_cell()[0])
        text = f"{run.summary()} `%goat undo` reverts it."
        renderer.show(WidgetView(button.widget, text, hint="", kind="revert", key=button.key))
    else:
        renderer.handle(Notice(f"{run.summary()} `%goat undo` reverts it.", "info"))


def revert_record(report: RevertReport, base: str) -> Bundle:
    """What the transcript keeps in place of the button once the run is reverted."""
    rest = relative(report.text(), base).splitlines()[1:]
    return record_bundle(
        "↶",
        style.AMBER,
        relative(report.headline(who()), base),
        details_html=f'<pre style="{style.PRE}">{escape(chr(10).join(rest))}</pre>',
        details_text="\n".join(rest),
        summary="what was reverted",
    )


def tell_model(goat: GoatRuntime, report: RevertReport) -> None:
    """The model's next turn starts with what the user undid, so it does not build on it."""
    goat.session.add_note(
        f"The user reverted the changes of %%goat run {report.run.number} ({report.run.label}). "
        "The files and cells below are back as they were before that run; do not assume its changes exist:\n"
        + report.text()
    )


class RevertButton:
    """`Revert this run` plus a status line; the click may arrive on any thread, after the cell ended."""

    def __init__(self, goat: GoatRuntime, run: RunCheckpoint, cell_id: str | None = None) -> None:
        w = ipywidgets()
        self.goat, self.run, self.cell_id = goat, run, cell_id
        self.key = f"revert-{id(run):x}"
        self.loop = asyncio.get_running_loop()
        self.button: Any = w.Button(description=REVERT_LABEL, icon="undo", tooltip=run.summary())
        self.status: Any = w.HTML(value=f"<span>{escape(run.summary())}</span>")
        self.widget: Any = w.HBox([self.button, self.status])
        on_click(self.button, self._clicked)

    def _clicked(self) -> None:
        self.loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        if self.button.disabled:
            return
        self.button.disabled = True
        if self.run.reverted:
            self.status.value = "<span>This run was already reverted.</span>"
            return
        self.button.description = "Reverting…"
        task = self.loop.create_task(self._revert())
        _reverts.add(task)
        task.add_done_callback(_reverts.discard)

    async def _revert(self) -> None:
        try:
            report = await revert_run(self.goat, self.run, probe=True)
        except Exception as exc:  # shown in the widget: there is no cell output to print to any more
            self.status.value = f"<span>Revert failed: {escape(str(exc))}</span>"
            self.button.description = REVERT_LABEL
            self.button.disabled = False
            return
        self.button.description = "Reverted"
        shown = relative(report.text(), str(self.goat.session.workspace))
        self.status.value = f"<pre style='margin:0'>{escape(shown)}</pre>"
        await self._record(report)

    async def _record(self, report: RevertReport) -> None:
        """Put the record where the button was in the saved notebook (JupyterLab shows no display
        updates for a cell that has finished, so the labextension swaps the output)."""
        service = self.goat.services.bridge
        if service is None or self.cell_id is None:
            return
        scoped = service.fork()
        try:
            if await scoped.hello() is not None:
                data = revert_record(report, str(self.goat.session.workspace))
                await scoped.bridge.request(
                    "replace_goat_output", cell_id=self.cell_id, key=self.key, data=data
                )
        except GoatError:
            _log.debug("goat: the revert record could not replace the button", exc_info=True)
        finally:
            scoped.end_run()


async def revert_run(goat: GoatRuntime, run: RunCheckpoint, *, probe: bool) -> RevertReport:
    """Revert over a comm of its own, opened for whoever asked (a click or an undo cell)."""
    service = goat.services.bridge
    scoped = None if service is None else service.fork()
    if scoped is not None:
        scoped.probe = probe
    try:
        report = await checkpoints_of(goat).revert(run, scoped)
    finally:
        if scoped is not None:
            scoped.end_run()
    tell_model(goat, report)
    return report


async def undo_last(goat: GoatRuntime) -> None:
    """`%goat undo`: revert the newest run that changed something and was not reverted yet."""
    run = checkpoints_of(goat).last_revertible()
    if run is None:
        print(
            "Nothing to undo: no %%goat run in this kernel changed files or cells that were not reverted yet."
        )
        return
    report = await revert_run(goat, run, probe=running_cell()[1])
    from IPython.display import display  # pyright: ignore[reportUnknownVariableType]

    display(revert_record(report, str(goat.session.workspace)), raw=True)
