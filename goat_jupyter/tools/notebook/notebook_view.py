"""Render a notebook (nbformat 4 JSON) for the model: cells with ids, sources and bounded outputs."""

from __future__ import annotations

import base64
import binascii
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from goat_jupyter.errors import ToolExecutionError
from goat_jupyter.permissions.cell_tags import tag_key, tags_of
from goat_jupyter.represent import LLM_MIME
from goat_jupyter.text import check_json_depth, multiline, strip_ansi
from goat_jupyter.tools.base import Attachment, ToolOutput
from goat_jupyter.tools.files import prepare_image

MAX_CELL_OUTPUT_CHARS = 10_000
MAX_NOTEBOOK_IMAGES = 20
_TEXT_KINDS = (LLM_MIME, "text/plain", "text/markdown", "text/latex", "text/html", "application/json")
_IMAGE_KINDS = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TAG_MEANINGS = {
    "goat:locked": "locked: editing, deleting or running it asks the user",
    "goat:ask": "editing, deleting or running it asks the user",
    "goat:no-edit": "you may not edit or delete it",
    "goat:no-run": "you may not run it",
}


@dataclass
class NotebookView:
    """What Read returns for a notebook: the text and the output images as attachments."""

    text: str
    attachments: list[Attachment] = field(default_factory=lambda: list[Attachment]())
    cell_count: int = 0


def load_notebook_json(path: Path) -> Mapping[str, Any]:
    """The notebook file as an nbformat-4 dict (older versions upgraded, line lists joined)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolExecutionError(f"{path} is not a valid Jupyter notebook: it is not UTF-8 text.") from None
    import nbformat  # costs ~2 s to import: only when a notebook is actually read

    reads = cast(Callable[..., Mapping[str, Any]], nbformat.reads)  # pyright: ignore[reportUnknownMemberType]
    try:
        check_json_depth(text, str(path))  # nbformat would recurse until Python gives up
        return reads(text, as_version=4)
    except Exception as exc:  # nbformat raises JSON, schema and conversion errors of many types
        raise ToolExecutionError(f"{path} is not a valid Jupyter notebook: {exc}") from None


def read_notebook_file(path: Path) -> ToolOutput:
    """Read's result for a .ipynb file on disk."""
    notebook = load_notebook_json(path)
    try:
        view = render_notebook(notebook, path=path)
    except (AttributeError, TypeError, KeyError) as exc:  # cells or outputs of the wrong JSON type
        raise ToolExecutionError(f"{path} is not a well-formed notebook: {exc}") from None
    meta = {"path": str(path), "cell_count": view.cell_count}
    return ToolOutput(view.text, metadata=meta, attachments=view.attachments)


def render_notebook(
    nb: Mapping[str, Any], *, path: Path | None = None, kernel: Mapping[str, str] | None = None
) -> NotebookView:
    """The model's view of a notebook dict; the live bridge can pass its model's JSON here too.

    `kernel`: per cell id, the cell's state against what the kernel ran (edited since it ran, ...)."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells") or []
    view = NotebookView("", cell_count=len(cells))
    parts = [f"Notebook {path or '(live)'}: {len(cells)} cells, language {_language(nb)}."]
    for index, cell in enumerate(cells):
        parts.append(_render_cell(index, cell, view, path, (kernel or {}).get(str(cell.get("id")))))
    view.text = "\n\n".join(parts)
    return view


def _language(nb: Mapping[str, Any]) -> str:
    metadata: Mapping[str, Any] = nb.get("metadata") or {}
    info: Mapping[str, Any] = metadata.get("language_info") or metadata.get("kernelspec") or {}
    return str(info.get("name") or info.get("language") or "unknown")


def _render_cell(
    index: int, cell: Mapping[str, Any], view: NotebookView, path: Path | None, kernel: str | None = None
) -> str:
    cell_id = str(cell.get("id") or f"cell-{index}")
    cell_type = str(cell.get("cell_type", "code"))
    attrs = f'index="{index}" id="{cell_id}" type="{cell_type}"'
    if cell_type == "code" and cell.get("execution_count") is not None:
        attrs += f' execution_count="{cell["execution_count"]}"'
    if kernel:
        attrs += f' kernel="{kernel}"'
    attrs += _lock_attrs(cell.get("metadata") or {})
    text = f"<cell {attrs}>\n{multiline(cell.get('source'))}\n</cell>"
    outputs: Sequence[Mapping[str, Any]] = cell.get("outputs") or []
    if cell_type != "code" or not outputs:
        return text
    images: list[Attachment] = []
    rendered = "\n".join(_render_output(out, cell_id, images, len(view.attachments)) for out in outputs)
    if len(rendered) > MAX_CELL_OUTPUT_CHARS:
        rendered = _elided_note(index, len(rendered), len(images), path)
    else:
        view.attachments.extend(images)
    return f'{text}\n<outputs cell="{cell_id}">\n{rendered}\n</outputs>'


def _lock_attrs(metadata: Mapping[str, Any]) -> str:
    """The cell's tags, and what the user's goat tags mean for the agent (permissions/cell_tags.py)."""
    tags = tags_of(metadata)
    if not tags:
        return ""
    text = f' tags="{", ".join(tags)}"'
    keys = {tag_key(t) for t in tags}
    rules = [meaning for tag, meaning in _TAG_MEANINGS.items() if tag in keys]
    return text + (f' goat="{"; ".join(rules)}"' if rules else "")


def _elided_note(index: int, size: int, image_count: int, path: Path | None) -> str:
    images = f" and {image_count} images" if image_count else ""
    if path is None:
        how = "Inspect them in the kernel (KernelInspect) or read the saved notebook file."
    else:
        script = f'import json,sys; print(json.load(open(sys.argv[1]))["cells"][{index}]["outputs"])'
        how = f"To read them, use Bash: python -c {shlex.quote(script)} {shlex.quote(str(path))} | head -c 30000"
    return f"[outputs elided: {size:,} characters{images}, over the {MAX_CELL_OUTPUT_CHARS:,} shown per cell. {how}]"


def _render_output(output: Mapping[str, Any], cell_id: str, images: list[Attachment], before: int) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return f"[{output.get('name', 'stdout')}]\n{strip_ansi(multiline(output.get('text')))}"
    if kind == "error":
        lines: list[object] = output.get("traceback") or []
        traceback = strip_ansi("\n".join(multiline(line) for line in lines))
        return f"[error] {output.get('ename', '')}: {strip_ansi(str(output.get('evalue', '')))}\n{traceback}"
    label = "[result]" if kind == "execute_result" else "[display]"
    data: Mapping[str, Any] = output.get("data") or {}
    pieces = [
        _image_piece(data[mime], mime, cell_id, images, before) for mime in _IMAGE_KINDS if mime in data
    ]
    text_kind = next((mime for mime in _TEXT_KINDS if mime in data), None)
    if text_kind is not None:
        pieces.append(strip_ansi(_mime_text(data[text_kind])))
    elif "image/svg+xml" in data:
        pieces.append("(SVG image output, not shown)")
    return f"{label}\n" + "\n".join(pieces or [f"(output with {', '.join(data) or 'no data'})"])


def _mime_text(value: object) -> str:
    if isinstance(value, dict):  # application/json data
        return json.dumps(value, indent=1)
    return multiline(value)


def _image_piece(value: object, mime: str, cell_id: str, images: list[Attachment], before: int) -> str:
    if before + len(images) >= MAX_NOTEBOOK_IMAGES:
        return f"({mime} output not attached: this notebook already has {MAX_NOTEBOOK_IMAGES} images shown)"
    try:
        raw = base64.b64decode("".join(multiline(value).split()), validate=True)
        shown = prepare_image(raw)
    except (binascii.Error, ValueError, ToolExecutionError):
        return f"({mime} output that could not be decoded)"
    number = before + len(images) + 1
    description = f"Output image {number} of cell {cell_id}: {shown.describe()}"
    images.append(shown.attachment(description))
    return f"(image {number}: {shown.describe()}, attached)"
