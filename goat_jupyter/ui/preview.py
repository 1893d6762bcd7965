"""What an approval prompt previews: a coloured diff for file edits, the command, the URL, the code.

Diffs are computed from the file as it is now and the proposed change; nothing is written.
"""

from __future__ import annotations

import asyncio
import json
import os
from html import escape
from pathlib import Path
from typing import Any

from goat_jupyter.ui import style
from goat_jupyter.ui.html import diff_html

MAX_PREVIEW_BYTES = 2_000_000  # larger files get no diff, only a note
MAX_DIFF_LINES = 400
MAX_ARGS_CHARS = 20_000
DIFF_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
CODE_FIELDS = ("code", "expression", "command")
SCROLL_BOX = "max-height:30em;overflow:auto"


class NoPreviewError(Exception):
    """The change cannot be previewed (missing file, no match, too big): the reason is shown instead."""


def resolve(raw: str, cwd: Path) -> Path:
    """The path a tool would use: `~` expanded, relative to the session's cwd."""
    expanded = os.path.expanduser(raw)
    return Path(os.path.normpath(os.path.join(cwd, expanded)))


async def preview_html(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The kind-specific preview of one call; the full arguments are always in a folded block below."""
    try:
        if tool_name in DIFF_TOOLS:
            body = diff_block(await asyncio.to_thread(proposed_diff, tool_name, args, cwd))
        else:
            body = _plain_preview(tool_name, args)
    except NoPreviewError as exc:
        body = f'<div style="{style.NOTE}">{escape(str(exc))}</div>'
    except Exception as exc:  # a preview must never stop the prompt from showing
        body = f'<div style="{style.NOTE}">No preview available ({escape(type(exc).__name__)}: {escape(str(exc))}).</div>'
    return body + arguments_block(args)


def diff_block(diff: str) -> str:
    if not diff.strip():
        return f'<div style="{style.NOTE}">No change to the content.</div>'
    lines = diff.splitlines()
    if len(lines) > MAX_DIFF_LINES:
        diff = "\n".join(lines[:MAX_DIFF_LINES]) + f"\n… {len(lines) - MAX_DIFF_LINES} more diff lines"
    return f'<div style="{SCROLL_BOX}">{diff_html(diff)}</div>'


def arguments_block(args: dict[str, Any]) -> str:
    text = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_ARGS_CHARS:
        text = text[:MAX_ARGS_CHARS] + "\n…"
    pre = f'<pre style="{style.PRE}">{escape(text)}</pre>'
    return f'<details><summary style="{style.SUMMARY}">arguments</summary>{pre}</details>'


def _plain_preview(tool_name: str, args: dict[str, Any]) -> str:
    if tool_name == "WebFetch":
        method = str(args.get("method") or "GET").upper()
        url = escape(str(args.get("url", "")))
        return f'<div style="{style.MONO}"><b>{escape(method)}</b> <a href="{url}" target="_blank">{url}</a></div>'
    for field in CODE_FIELDS:
        value = args.get(field)
        if isinstance(value, str) and value:
            prompt = "$ " if tool_name == "Bash" else ""
            note = args.get("description")
            caption = f'<div style="{style.NOTE}">{escape(str(note))}</div>' if note else ""
            return f'{caption}<pre style="{style.PRE}">{escape(prompt + value)}</pre>'
    return ""


def proposed_diff(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The unified diff the call would make (Edit, Write, NotebookEdit)."""
    from goat_jupyter.tools.edit import unified_diff

    if tool_name == "NotebookEdit":
        path = resolve(str(args.get("notebook_path", "")), cwd)
        before, after, label = notebook_change(path, args)
        return unified_diff(Path(f"{path} ({label})"), before, after)
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
    from goat_jupyter.tools.edit import plan_edit

    old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
    if before is None:
        if old:
            raise NoPreviewError(f"{path} does not exist, so this Edit will fail.")
        return new.replace("\r\n", "\n")
    try:
        return plan_edit(before, old, new, bool(args.get("replace_all")), path)[2]
    except InvalidInputError as exc:
        raise NoPreviewError(f"{exc.message.split(';')[0]}, so this Edit will fail.") from None


def notebook_change(path: Path, args: dict[str, Any]) -> tuple[str, str, str]:
    """(source before, source after, which cell) for a NotebookEdit, from the .ipynb file."""
    from goat_jupyter.notebook import CellInfo, find_cell, load_notebook

    notebook = load_notebook(path)
    cells = [
        CellInfo(str(cell.get("id", f"cell-{index}")), index, cell.cell_type, str(cell.source))
        for index, cell in enumerate(notebook.cells)
    ]
    mode = str(args.get("edit_mode") or "replace")
    cell_id = args.get("cell_id")
    target = find_cell(cells, str(cell_id), where=str(path)) if cell_id else None
    new_source = str(args.get("new_source", ""))
    if mode == "insert" or target is None:
        where = f"after {target.id}" if target else "at the top"
        return "", new_source, f"new {args.get('cell_type') or 'code'} cell {where}"
    if mode == "delete":
        return target.source, "", f"delete cell {target.id}"
    return target.source, new_source, f"cell {target.id}"
