"""Edit: exact string replacement in a file."""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import InvalidInputError, InvalidPathError, ToolExecutionError
from goat_jupyter.fileio import (
    TextFormat,
    count_lines,
    missing_file_error,
    os_errors,
    read_text,
    sniff_binary,
    write_text_atomic,
)
from goat_jupyter.state import FileReadState
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.bounding import cut_line
from goat_jupyter.tools.write import ensure_parent

CONTEXT_LINES = 4
MAX_LINE_CHARS = 2000


class EditInput(ToolInput):
    file_path: str = Field(description="Path of the file to change.")
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


def numbered_snippet(text: str, start: int, end: int, context: int = CONTEXT_LINES) -> str:
    """The lines holding text[start:end] plus `context` lines each side, numbered like Read."""
    low = text.rfind("\n", 0, start) + 1
    for _ in range(context):
        if low == 0:
            break
        low = text.rfind("\n", 0, low - 1) + 1
    high = text.find("\n", end)
    for _ in range(context):
        if high < 0:
            break
        high = text.find("\n", high + 1)
    region = text[low : len(text) if high < 0 else high].removesuffix("\n")
    first = text.count("\n", 0, low) + 1
    return "\n".join(
        f"{number}\t{cut_line(line, MAX_LINE_CHARS)}" for number, line in enumerate(region.split("\n"), first)
    )


def unified_diff(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=str(path), tofile=str(path), lineterm=""
    )
    return "\n".join(lines)


def replace_text(text: str, old: str, new: str, replace_all: bool, path: Path) -> tuple[str, int]:
    """`text` with `old` replaced (once, or everywhere), and the number of replacements."""
    count = text.count(old)
    if count == 0:
        raise InvalidInputError(
            f"old_string was not found in {path}; the file is unchanged. It must match exactly, including "
            "whitespace and indentation: Read the file again and copy the text from it."
        )
    if count > 1 and not replace_all:
        raise InvalidInputError(
            f"old_string occurs {count} times in {path}; the file is unchanged. Add surrounding lines to "
            "old_string so it matches exactly one place, or set replace_all to true to change every one."
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1), count


def create_file(path: Path, content: str, reads: FileReadState) -> ToolOutput:
    """An Edit with an empty old_string on a missing file: create it with new_string."""
    ensure_parent(path)
    write_text_atomic(path, content, TextFormat())
    reads.record(path)
    meta = {"path": str(path), "diff": unified_diff(path, "", content), "replacements": 0}
    snippet = numbered_snippet(content, 0, len(content)) if content else "(empty)"
    return ToolOutput(f"Created {path} ({count_lines(content)} lines):\n{snippet}", metadata=meta)


def check_arguments(path: Path, args: EditInput) -> None:
    if path.suffix.lower() == ".ipynb":
        raise InvalidInputError(f"{path} is a notebook: use NotebookEdit to change its cells.")
    if args.old_string == args.new_string:
        raise InvalidInputError("old_string and new_string are identical, so nothing would change.")


def planned_edit(
    path: Path, args: EditInput, reads: FileReadState, cwd: Path
) -> tuple[str, TextFormat, str, int]:
    """(text now, its format, text after, replacements) for an existing file; raises what Edit would."""
    if not path.exists():
        raise missing_file_error(path, cwd)
    if path.is_dir():
        raise InvalidPathError(f"{path} is a directory; Edit changes files.")
    reads.check_writable(path)  # first: content checks only for files the model has read
    if (reason := sniff_binary(path)) is not None:
        raise ToolExecutionError(f"{path} looks like a binary file ({reason}); Edit only changes text files.")
    text, fmt = read_text(path)
    old, new = args.old_string, args.new_string
    if fmt.newline == "\r\n":  # matching runs on the LF form; CRLF comes back on write
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if old == "":
        if text.strip():
            raise InvalidInputError(
                f"{path} already has content: an empty old_string only creates a new file or fills an empty "
                "one. Give the exact text to replace."
            )
        return text, fmt, new, 1
    updated, count = replace_text(text, old, new, args.replace_all, path)
    return text, fmt, updated, count


def precheck_edit(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> None:
    check_arguments(path, args)
    if path.exists() or args.old_string != "":
        planned_edit(path, args, reads, cwd)


def edit_file(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> ToolOutput:
    """Apply one Edit to `path`, keeping its encoding, line endings and mode."""
    if not path.exists() and args.old_string == "":
        return create_file(path, args.new_string, reads)
    text, fmt, updated, count = planned_edit(path, args, reads, cwd)
    old, new = args.old_string, args.new_string
    if fmt.newline == "\r\n":
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    write_text_atomic(path, updated, fmt)
    reads.record(path)
    start = text.find(old) if old else 0
    snippet = numbered_snippet(updated, start, start + len(new))
    times = "1 occurrence" if count == 1 else f"all {count} occurrences"
    first = " (the first one shown)" if count > 1 else ""
    meta = {"path": str(path), "diff": unified_diff(path, text, updated), "replacements": count}
    return ToolOutput(
        f"Edited {path}: replaced {times}{first}. The changed region now reads:\n{snippet}", metadata=meta
    )


class EditTool(Tool[EditInput]):
    name = "Edit"
    input_model = EditInput
    side_effect = "mutating"

    def title_for(self, args: EditInput) -> str:
        return f"Edit {args.file_path}"

    async def precheck(self, args: EditInput, ctx: ToolContext) -> None:
        path = ctx.resolve_path(args.file_path)
        with os_errors(path, "editing"):
            await asyncio.to_thread(precheck_edit, path, args, ctx.session.file_reads, ctx.cwd)

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolOutput | str:
        path = ctx.resolve_path(args.file_path)
        check_arguments(path, args)
        with os_errors(path, "editing"):
            return await asyncio.to_thread(edit_file, path, args, ctx.session.file_reads, ctx.cwd)
