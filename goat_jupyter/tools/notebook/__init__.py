"""The notebook tools: NotebookEdit, RunCell and KernelInspect, with the live notebook or its file
(notebook_live.py), the notebook as the model reads it (notebook_view.py), the proof an edit landed
(notebook_landed.py), the user's cell locks (cell_locks.py) and the provenance of goat's cells
(notebook_provenance.py).

Other families and layers (Read, the file tools, the kernel's services, checkpoints) use the names
below; the other helpers are this family's own (tests/test_architecture.py)."""

from goat_jupyter.tools.notebook.cell_locks import address, check_at_run
from goat_jupyter.tools.notebook.notebook_live import (
    choose_backend,
    notebook_service,
    read_live_notebook,
    resolve_notebook,
)
from goat_jupyter.tools.notebook.notebook_provenance import refuse_notebook_rewrite
from goat_jupyter.tools.notebook.notebook_view import read_notebook_file, strip_ansi

__all__ = [
    "address",
    "check_at_run",
    "choose_backend",
    "notebook_service",
    "read_live_notebook",
    "read_notebook_file",
    "refuse_notebook_rewrite",
    "resolve_notebook",
    "strip_ansi",
]
