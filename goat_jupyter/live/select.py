"""Which backend a notebook gets: the live JupyterLab model when it is open there, else the file."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from goat_jupyter.errors import ConflictError, GoatError
from goat_jupyter.live.bridge import CellInfo, NotebookBackend
from goat_jupyter.live.comm_bridge import CommBridge, Hello
from goat_jupyter.live.file_bridge import FileNotebook
from goat_jupyter.live.live_notebook import LiveNotebook

Notify = Callable[[str], None]
NOT_FROM_JUPYTERLAB = "this cell was not run from JupyterLab (its request carried no cell id)"


def print_notice(text: str) -> None:
    print(text, file=sys.stderr)


def same_path(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def cell_hash(cell_type: str, source: str) -> str:
    return hashlib.sha256(f"{cell_type}\0{source}".encode()).hexdigest()


class CellReads:
    """Per session and notebook: each cell's type and source as the agent last saw or wrote it."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], dict[str, str]] = {}

    def record(self, session_id: str, path: Path, cells: Iterable[CellInfo]) -> None:
        key = (session_id, os.path.realpath(path))
        self._seen[key] = {cell.id: cell_hash(cell.cell_type, cell.source) for cell in cells}

    def wrote(self, session_id: str, path: Path, cell_id: str, cell_type: str, source: str | None) -> None:
        """The agent changed a cell (None: deleted it); only notebooks it has read are tracked."""
        seen = self._seen.get((session_id, os.path.realpath(path)))
        if seen is None:
            return
        if source is None:
            seen.pop(cell_id, None)
        else:
            seen[cell_id] = cell_hash(cell_type, source)

    def check(self, session_id: str, path: Path, cell: CellInfo) -> None:
        """Raise CONFLICT unless `cell` is exactly as the agent last saw it."""
        seen = self._seen.get((session_id, os.path.realpath(path)))
        if seen is None:
            raise ConflictError(
                f"{path} is open in JupyterLab and has not been read in this session. Read it first "
                "(you will see the live cells, unsaved changes included), then retry the edit."
            )
        known = seen.get(cell.id)
        if known is None:
            raise ConflictError(
                f"Cell {cell.id} was added to {path} after you last read it. Read the notebook again "
                "before changing it; nothing was changed."
            )
        if known != cell_hash(cell.cell_type, cell.source):
            raise ConflictError(
                f"Cell {cell.id} of {path} was changed in JupyterLab (by the user) since you last read "
                "it, so your edit was not applied to avoid overwriting their work. Read the notebook "
                "again and redo the edit on the current source."
            )


class NotebookService:
    """The "bridge" service: chooses live or file per notebook, tracks reads, tells the user once."""

    def __init__(
        self,
        bridge_factory: Callable[[], CommBridge] = CommBridge,
        *,
        notify: Notify = print_notice,
        kernel_dir: Path | None = None,
    ) -> None:
        self._factory = bridge_factory
        self.notify = notify
        self.kernel_dir = kernel_dir or Path.cwd()
        self.reads = CellReads()
        self.running_cell_id: str | None = None
        self.running_prompt = ""  # the running %%goat cell's prompt (provenance of the cells it writes)
        self.probe = True  # False when no frontend that could answer ran the cell (nbclient, console)
        self.told = False
        self.fallback_told: set[str] = set()  # sessions whose model was told edits went to the file
        self._bridge: CommBridge | None = None
        self._placed: dict[str, str] = {}  # notebook -> last cell put below the running cell this run

    def begin_run(
        self, *, running_cell_id: str | None, probe: bool, notify: Notify | None = None, prompt: str = ""
    ) -> None:
        """A %%goat run starts: a fresh comm (the new cell is its parent), its cell, its notices."""
        self.end_run()
        self.running_cell_id = running_cell_id
        self.running_prompt = prompt
        self.probe = probe
        if notify is not None:
            self.notify = notify

    def end_run(self) -> None:
        if self._bridge is not None:
            self._bridge.close()
            self._bridge = None
        self._placed.clear()

    def fork(self) -> NotebookService:
        """A service with its own comm (for a revert started by a click), sharing reads and notices."""
        other = NotebookService(self._factory, notify=self.notify, kernel_dir=self.kernel_dir)
        other.reads, other.told, other.fallback_told = self.reads, True, self.fallback_told
        return other

    @property
    def bridge(self) -> CommBridge:
        if self._bridge is None:
            self._bridge = self._factory()
        return self._bridge

    async def hello(self) -> Hello | None:
        """The frontend's hello, or None after telling the user (once) why the files are used."""
        if not self.probe:
            self._tell(NOT_FROM_JUPYTERLAB)
            return None
        hello = await self.bridge.connect()
        if hello is None:
            self._tell(self.bridge.absent_reason)
        elif self.running_cell_id is None:
            await self._ask_running_cell()
        return hello

    async def _ask_running_cell(self) -> None:
        """For frontends that send no cell id with execute requests: ask which cell is running."""
        self.running_cell_id = ""  # ask once per run
        try:
            reply = await self.bridge.request("running_cell")
        except GoatError:
            return
        self.running_cell_id = str(reply.get("cell_id") or "")

    async def owner_path(self) -> Path | None:
        """The notebook this kernel belongs to, as the frontend reports it."""
        hello = await self.hello()
        return None if hello is None else hello.owner_path(self.kernel_dir)

    async def is_open(self, path: str | Path) -> bool:
        """Whether the frontend has `path` open (Write refuses such notebooks)."""
        return await self._frontend_path(Path(path)) is not None

    @property
    def fallback_reason(self) -> str | None:
        """Why the frontend that ran the cell did not answer (the files are used instead); None when
        it did, or when no frontend ran it (headless: the file is the notebook)."""
        bridge = self._bridge
        return bridge.absent_reason or None if bridge is not None and bridge.state == "absent" else None

    async def backend_for(self, path: Path) -> NotebookBackend:
        """The live notebook when the frontend has it open, else the .ipynb file."""
        frontend_path = await self._frontend_path(path)
        if frontend_path is None:
            return FileNotebook(path)
        return LiveNotebook(self.bridge, path, frontend_path or None)

    async def _frontend_path(self, path: Path) -> str | None:
        """ "" for the kernel's own notebook, its server-relative path if open elsewhere, else None."""
        hello = await self.hello()
        if hello is None:
            return None
        if same_path(path, hello.owner_path(self.kernel_dir)):
            return ""
        relative = hello.relative(path)
        if relative is None:
            return None
        reply = await self.bridge.request("is_open", path=relative)
        return relative if reply.get("open") else None

    def default_anchor(self, path: Path, cells: Sequence[CellInfo]) -> CellInfo | None:
        """Where an insert without a cell id goes: below the running cell (after earlier such inserts)."""
        by_id = {cell.id: cell for cell in cells}
        placed = self._placed.get(os.path.realpath(path))
        if placed in by_id:
            return by_id[placed]
        return by_id.get(self.running_cell_id or "")

    def placed_below(self, path: Path, cell_id: str) -> None:
        self._placed[os.path.realpath(path)] = cell_id

    def _tell(self, reason: str) -> None:
        if self.told:
            return
        self.told = True
        self.notify(
            f"The live notebook bridge is not available ({reason}), so goat reads and edits .ipynb files "
            "on disk. A notebook open in JupyterLab shows those edits only after File > Reload Notebook "
            "from Disk; saving it before that would overwrite them."
        )


def live_notebook_service() -> NotebookService | None:
    """The service for this ipykernel kernel; None outside one (no frontend can answer there)."""
    if "ipykernel" not in sys.modules:
        return None
    from ipykernel.kernelbase import Kernel

    return NotebookService() if Kernel.initialized() else None
