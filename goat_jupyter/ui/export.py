"""`jupyter nbconvert --to goat`: a notebook's transcript as terminal text (registered as the
`goat` exporter in pyproject.toml; `--execute` runs the notebook first, as for any exporter)."""

from __future__ import annotations

from typing import Any

from nbconvert.exporters import Exporter
from nbformat import NotebookNode
from traitlets import default

from goat_jupyter.ui.transcript import notebook_transcript


class TranscriptExporter(Exporter):
    """One line per tool call, the model's Markdown as text, no HTML: what CI logs and reviews read."""

    output_mimetype = "text/plain"
    export_from_notebook = "goat transcript"

    @default("file_extension")
    def _file_extension_default(self) -> str:
        return ".txt"

    def from_notebook_node(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, nb: NotebookNode, resources: Any | None = None, **kw: Any
    ) -> tuple[str, dict[str, Any]]:
        executed, resources = super().from_notebook_node(nb, resources, **kw)
        return notebook_transcript(executed), resources
