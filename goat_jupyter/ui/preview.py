"""What an approval prompt previews: a coloured diff for file edits, the command, the URL, the code.

Diffs are computed from the file as it is now and the proposed change; nothing is written.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goat_jupyter.ui import style
from goat_jupyter.ui.html import diff_html

MAX_PREVIEW_BYTES = 2_000_000  # larger files get no diff, only a note
MAX_DIFF_LINES = 400
MAX_ARGS_CHARS = 20_000
DIFF_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
CODE_FIELDS = ("code", "expression", "command")
SCROLL_BOX = "max-height:30em;overflow:auto"

if TYPE_CHECKING:
    from goat_jupyter.live import CellInfo
    from goat_jupyter.live.cell_mark import CellMark


class NoPreviewError(Exception):
    """The change cannot be previewed (missing file, no match, too big): the reason is shown instead."""


def resolve(raw: str, cwd: Path) -> Path:
    """The path a tool would use: `~` expanded, relative to the session's cwd."""
    expanded = os.path.expanduser(raw)
    return Path(os.path.normpath(os.path.join(cwd, expanded)))


@dataclass(frozen=True)
class Preview:
    """What a call will do, for the prompt and for the record kept after the decision."""

    html: str
    text: str
    mark: CellMark | None = None  # what the live notebook shows at the cell while the user decides


def note_preview(text: str) -> Preview:
    return Preview(f'<div style="{style.NOTE}">{escape(text)}</div>', text)


async def build_preview(tool_name: str, args: dict[str, Any], cwd: Path, notebook: Any = None) -> Preview:
    """The kind-specific preview of one call: a diff, the command or code, the URL, the cell to run.

    `notebook` is the notebook service (the bridge), when there is one."""
    try:
        if tool_name == "RunCell" and notebook is not None:
            return await run_cell_preview(args, cwd, notebook)
        if tool_name == "NotebookEdit":
            return await notebook_edit_preview(args, cwd, notebook)
        if tool_name in DIFF_TOOLS:
            return diff_preview(await asyncio.to_thread(proposed_diff, tool_name, args, cwd))
        return _plain_preview(tool_name, args)
    except NoPreviewError as exc:
        return note_preview(str(exc))
    except Exception as exc:  # a preview must never stop the prompt from showing
        return note_preview(f"No preview available ({type(exc).__name__}: {exc}).")


async def preview_html(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The preview, with the full arguments in a folded block below."""
    return (await build_preview(tool_name, args, cwd)).html + arguments_block(args)


def diff_preview(diff: str) -> Preview:
    if not diff.strip():
        return note_preview("No change to the content.")
    lines = diff.splitlines()
    if len(lines) > MAX_DIFF_LINES:
        diff = "\n".join(lines[:MAX_DIFF_LINES]) + f"\n… {len(lines) - MAX_DIFF_LINES} more diff lines"
    return Preview(f'<div style="{SCROLL_BOX}">{diff_html(diff)}</div>', diff)


async def run_cell_preview(args: dict[str, Any], cwd: Path, notebook: Any) -> Preview:
    """The cell RunCell would run: its source and the number JupyterLab shows (1-based); the
    frontend scrolls to it, highlights it and keeps it read-only until the answer (its mark)."""
    from goat_jupyter.live import cell_label, find_cell
    from goat_jupyter.live.cell_mark import CellMark

    raw = args.get("notebook_path")
    path = resolve(str(raw), cwd) if raw else await notebook.owner_path()
    if path is None:
        raise NoPreviewError("The notebook is not known here, so the cell cannot be shown.")
    backend = await notebook.backend_for(path)
    cells = await backend.list_cells()
    cell = find_cell(cells, str(args.get("cell_id", "")), where=path.name)
    where = f"{cell_label(cell, len(cells)).capitalize()} in {path.name}"
    html = (
        f'<div style="{style.NOTE}">{escape(where)}</div><pre style="{style.PRE}">{escape(cell.source)}</pre>'
    )
    mark = CellMark("run", cell.id, backend.frontend_path) if backend.live else None
    return Preview(html, f"{where}:\n{cell.source}", mark)


def arguments_block(args: dict[str, Any]) -> str:
    text = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_ARGS_CHARS:
        text = text[:MAX_ARGS_CHARS] + "\n…"
    pre = f'<pre style="{style.PRE}">{escape(text)}</pre>'
    return f'<details><summary style="{style.SUMMARY}">arguments</summary>{pre}</details>'


def _plain_preview(tool_name: str, args: dict[str, Any]) -> Preview:
    if tool_name == "WebFetch":
        method = str(args.get("method") or "GET").upper()
        raw_url = str(args.get("url", ""))
        url = escape(raw_url)
        html = f'<div style="{style.MONO}"><b>{escape(method)}</b> <a href="{url}" target="_blank">{url}</a></div>'
        return Preview(html, f"{method} {raw_url}")
    for field in CODE_FIELDS:
        value = args.get(field)
        if isinstance(value, str) and value:
            prompt = "$ " if tool_name == "Bash" else ""
            note = args.get("description")
            caption = f'<div style="{style.NOTE}">{escape(str(note))}</div>' if note else ""
            return Preview(
                f'{caption}<pre style="{style.PRE}">{escape(prompt + value)}</pre>', prompt + value
            )
    return Preview("", "")


async def notebook_edit_preview(args: dict[str, Any], cwd: Path, notebook: Any) -> Preview:
    """A NotebookEdit's diff against the cell as it is now: the live one in JupyterLab (unsaved edits
    included, and a never-saved notebook too), else the .ipynb file. Live, it is also shown at the cell."""
    from goat_jupyter.tools.files.edit import unified_diff

    path = resolve(str(args.get("notebook_path", "")), cwd)
    backend = await notebook.backend_for(path) if notebook is not None else None
    if backend is None or not backend.live:
        cells = await asyncio.to_thread(file_cells, path)
        before, after, label = notebook_change(cells, args, path)
        return diff_preview(unified_diff(Path(f"{path} ({label})"), before, after))
    return await live_edit_preview(args, path, notebook, backend)


async def live_edit_preview(args: dict[str, Any], path: Path, notebook: Any, backend: Any) -> Preview:
    """The diff against the live cells, and the mark that shows the change at its cell."""
    from goat_jupyter.tools.files.edit import unified_diff

    cells = await backend.list_cells()
    anchor = notebook.default_anchor(path, cells) if not args.get("cell_id") else None
    before, after, label = notebook_change(cells, args, path, anchor)
    preview = diff_preview(unified_diff(Path(f"{path} ({label})"), before, after))
    mark = edit_mark(cells, args, backend.frontend_path, anchor, preview.text)
    return preview if mark is None else dataclasses.replace(preview, mark=mark)


def proposed_diff(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The unified diff an Edit or Write would make."""
    from goat_jupyter.tools.files.edit import unified_diff

    path = resolve(str(args.get("file_path", "")), cwd)
    before = current_text(path)
    if tool_name == "Write":
        return unified_diff(path, before or "", str(args.get("content", "")))
    return unified_diff(path, before or "", edited_text(path, before, args))


def current_text(path: Path) -> str | None:
    """The file's text now (None when missing); too big or binary files cannot be previewed."""
    from goat_jupyter.fileio import read_text, sniff_binary

    if not path.exists():
        return None
    if path.is_dir():
        raise NoPreviewError(f"{path} is a directory; the call will fail.")
    if path.stat().st_size > MAX_PREVIEW_BYTES:
        raise NoPreviewError(f"{path} is larger than {MAX_PREVIEW_BYTES // 1_000_000} MB: no diff preview.")
    if (reason := sniff_binary(path)) is not None:
        raise NoPreviewError(f"{path} looks like a binary file ({reason}): no diff preview.")
    return read_text(path)[0]


def edited_text(path: Path, before: str | None, args: dict[str, Any]) -> str:
    """The text after an Edit, found the way Edit finds it (exact match, else a unique near match)."""
    from goat_jupyter.errors import InvalidInputError
    from goat_jupyter.tools.files.edit import plan_edit

    old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
    if before is None:
        if old:
            raise NoPreviewError(f"{path} does not exist, so this Edit will fail.")
        return new.replace("\r\n", "\n")
    try:
        return plan_edit(before, old, new, bool(args.get("replace_all")), path)[2]
    except InvalidInputError as exc:
        raise NoPreviewError(f"{exc.message.split(';')[0]}, so this Edit will fail.") from None


def file_cells(path: Path) -> list[CellInfo]:
    from goat_jupyter.live import CellInfo, load_notebook

    notebook = load_notebook(path)
    return [
        CellInfo(str(cell.get("id", f"cell-{index}")), index, cell.cell_type, str(cell.source))
        for index, cell in enumerate(notebook.cells)
    ]


def notebook_change(
    cells: list[CellInfo], args: dict[str, Any], path: Path, anchor: CellInfo | None = None
) -> tuple[str, str, str]:
    """(source before, source after, which cell) for a NotebookEdit of these cells; `anchor`: the cell
    an insert without a cell id follows (below the running %%goat cell)."""
    from goat_jupyter.live import cell_label, find_cell

    mode = str(args.get("edit_mode") or "replace")
    cell_id = args.get("cell_id")
    target = find_cell(cells, str(cell_id), where=str(path)) if cell_id else None
    new_source = str(args.get("new_source", ""))
    if mode == "insert" or target is None:
        after = target or anchor
        where = f"after {cell_label(after)}" if after else "at the top"
        return "", new_source, f"new {args.get('cell_type') or 'code'} cell {where}"
    if mode == "delete":
        return target.source, "", f"delete {cell_label(target, len(cells))}"
    return target.source, new_source, cell_label(target, len(cells))


def edit_mark(
    cells: list[CellInfo], args: dict[str, Any], frontend_path: str | None, anchor: CellInfo | None, diff: str
) -> CellMark | None:
    """What the notebook shows at the cell while a NotebookEdit waits: the diff at the changed cell,
    the cell to delete, or the new cell's source where it will go (None: no cell to show it at)."""
    from goat_jupyter.live import find_cell
    from goat_jupyter.live.cell_mark import CellMark

    mode = str(args.get("edit_mode") or "replace")
    cell_id = args.get("cell_id")
    target = find_cell(cells, str(cell_id)) if cell_id else None
    source, cell_type = str(args.get("new_source", "")), str(args.get("cell_type") or "code")
    if mode == "insert":
        after = target or anchor
        return CellMark(
            "insert", after.id if after else "", frontend_path, source=source, cell_type=cell_type
        )
    if target is None:
        return None  # the call fails (a cell id is required): nothing to show
    kind = "delete" if mode == "delete" else "edit"
    return CellMark(kind, target.id, frontend_path, diff=diff, cell_type=cell_type)
