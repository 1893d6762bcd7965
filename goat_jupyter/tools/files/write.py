"""Write: create or overwrite a file atomically."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import ConflictError, InvalidPathError, PermissionDeniedError, ToolExecutionError
from goat_jupyter.file_lock import locked
from goat_jupyter.fileio import (
    ABSENT,
    DiskVersion,
    TextFormat,
    count_lines,
    os_errors,
    read_text,
    sniff_format,
    write_text_atomic,
)
from goat_jupyter.state import FileReadState
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.files.placeholders import refuse_placeholders
from goat_jupyter.tools.notebook import refuse_notebook_rewrite


class WriteInput(ToolInput):
    file_path: str = Field(description="Path of the file to write (absolute, or relative to the cwd).")
    content: str = Field(description="The complete new content of the file.")


async def notebook_is_open(ctx: ToolContext, path: Path) -> bool:
    """Whether the notebook bridge (when attached) reports `path` open in the frontend."""
    bridge = ctx.services.bridge
    return bridge is not None and await bridge.is_open(path)


def ensure_parent(path: Path) -> None:
    """Create the missing parent folders of `path`, with errors the model can act on."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InvalidPathError(f"Cannot create {path}: part of its folder path is a file.") from None
    except PermissionError:
        raise PermissionDeniedError(f"The operating system does not allow creating {path.parent}.") from None


def refuse_folder_path(raw: str) -> None:
    """A path ending in a separator names a folder: never turn it into a file."""
    if raw.endswith(("/", os.sep)) or raw.endswith(("/.", "/..")):
        raise InvalidPathError(
            f"{raw!r} ends with '/', so it names a folder, not a file. Give the file's full path "
            "(folder plus file name)."
        )


def write_file(path: Path, content: str, reads: FileReadState) -> ToolOutput:
    """Create or replace `path` under its lock (existing files keep encoding, line endings and mode)."""
    with locked(path):
        return _write_locked(path, content, reads)


def check_write(path: Path, reads: FileReadState, content: str) -> os.stat_result | None:
    """What a Write to `path` would fail on (a folder there, an unread, partly read or changed file,
    placeholders replacing code); returns the file's stat as checked (None: no file yet)."""
    if path.is_dir():
        raise InvalidPathError(f"{path} is a directory; give the path of a file to write.")
    stat = reads.check_writable(path, whole=True)
    if stat is not None:
        refuse_placeholders(path, content, current_text(path), "content")
    return stat


def _precheck_locked(path: Path, reads: FileReadState, content: str) -> None:
    with locked(path):  # a concurrent write and its read record change together
        check_write(path, reads, content)


def _write_locked(path: Path, content: str, reads: FileReadState) -> ToolOutput:
    stat = check_write(path, reads, content)
    existed = stat is not None
    fmt = sniff_format(path) if existed else TextFormat()
    ensure_parent(path)
    write_text_atomic(path, content, fmt, expected=DiskVersion.of(stat) if stat else ABSENT)
    reads.record(path)
    lines = count_lines(content)
    verb = "Updated" if existed else "Created"
    meta = {"path": str(path), "created": not existed, "lines": lines}
    return ToolOutput(f"{verb} {path} ({lines} lines).", metadata=meta)


def current_text(path: Path) -> str:
    """The file's text for the placeholder check ("" when it is not text we can decode)."""
    try:
        return read_text(path)[0]
    except ToolExecutionError:
        return ""


class WriteTool(Tool[WriteInput]):
    name = "Write"
    input_model = WriteInput
    side_effect = "mutating"

    def title_for(self, args: WriteInput) -> str:
        return f"Write {args.file_path}"

    async def precheck(self, args: WriteInput, ctx: ToolContext) -> None:
        refuse_folder_path(args.file_path)
        path = ctx.resolve_path(args.file_path)
        await self._check_not_open(path, ctx)
        with os_errors(path, "writing"):
            await asyncio.to_thread(_precheck_locked, path, ctx.session.file_reads, args.content)

    async def _check_not_open(self, path: Path, ctx: ToolContext) -> None:
        refuse_notebook_rewrite(ctx, path, "write")
        if path.suffix.lower() == ".ipynb" and await notebook_is_open(ctx, path):
            raise ConflictError(
                f"{path} is open in JupyterLab: writing the file would be undone by the notebook's next save. "
                "Use NotebookEdit to change its cells."
            )

    async def run(self, args: WriteInput, ctx: ToolContext) -> ToolOutput | str:
        refuse_folder_path(args.file_path)
        path = ctx.resolve_path(args.file_path)
        await self._check_not_open(path, ctx)
        with os_errors(path, "writing"):
            return await asyncio.to_thread(write_file, path, args.content, ctx.session.file_reads)
