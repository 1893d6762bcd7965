"""Read: text files with line numbers, PDFs by page, images, and notebooks cell by cell."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import InvalidInputError, InvalidPathError, ToolExecutionError
from goat_jupyter.fileio import missing_file_error, os_errors, sniff_binary, sniff_format
from goat_jupyter.state import FileReadState
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.files.read_formats import IMAGE_EXTENSIONS, read_image, read_pdf
from goat_jupyter.tools.files.text_window import read_window
from goat_jupyter.tools.notebook import read_live_notebook, read_notebook_file

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
HASH_LIMIT_BYTES = 16 << 20  # partial reads of bigger files are stamped by mtime and size only


class ReadInput(ToolInput):
    file_path: str = Field(description="Path of the file to read (absolute, or relative to the cwd).")
    offset: int | None = Field(default=None, ge=0, description="1-based line number to start from.")
    limit: int | None = Field(default=None, ge=1, description="Number of lines to read (default 2000).")
    pages: str | None = Field(default=None, description='PDF page range such as "3", "1-5" or "10-".')


class ReadTool(Tool[ReadInput]):
    name = "Read"
    input_model = ReadInput
    side_effect = "read_only"
    spills = False  # Read is how a stored large output is paged: its own result is already a range

    def title_for(self, args: ReadInput) -> str:
        return f"Read {args.file_path}"

    async def run(self, args: ReadInput, ctx: ToolContext) -> ToolOutput | str:
        path = ctx.resolve_path(args.file_path)
        if path.is_dir():
            raise InvalidPathError(
                f"{path} is a directory, not a file. Use LS or Glob to see what it contains."
            )
        suffix = path.suffix.lower()
        # A notebook open in JupyterLab is read as the tab holds it, even where its file is gone or
        # not yet saved (a tab whose file was renamed or deleted): what the user sees is what exists.
        if suffix == ".ipynb" and (live := await read_live_notebook(path, ctx)) is not None:
            return live
        if not path.exists():
            raise missing_file_error(path, ctx.cwd)
        if not path.is_file():
            raise InvalidPathError(
                f"{path} is not a regular file (a device, socket or pipe); Read cannot open it."
            )
        if args.pages is not None and suffix != ".pdf":
            raise InvalidInputError(f"`pages` only applies to PDF files; {path} is not one. Leave pages out.")
        with os_errors(path, "reading"):
            return await asyncio.to_thread(self._read_file, path, suffix, args, ctx.session.file_reads)

    def _read_file(self, path: Path, suffix: str, args: ReadInput, reads: FileReadState) -> ToolOutput:
        if suffix in IMAGE_EXTENSIONS:
            output = read_image(path)
        elif suffix == ".pdf":
            output = read_pdf(path, args.pages)
        elif suffix == ".ipynb":
            output = read_notebook_file(path)
        else:
            output = self._read_text(path, args)
        meta = output.metadata
        lines = (
            (meta["first_line"], meta["last_line"], meta["total_lines"]) if "total_lines" in meta else None
        )
        reads.record(path, content_hash=path.stat().st_size <= HASH_LIMIT_BYTES, lines=lines)
        return output

    def _read_text(self, path: Path, args: ReadInput) -> ToolOutput:
        reason = sniff_binary(path)
        if reason is not None:
            raise ToolExecutionError(
                f"{path} looks like a binary file ({reason}). Read shows text, images (png, jpg, gif, webp), "
                "PDFs and notebooks; inspect other formats with Bash or Python (e.g. `file`, `xxd`, pandas)."
            )
        first = max(args.offset or 1, 1)
        window = read_window(
            path,
            sniff_format(path),
            first=first,
            limit=args.limit or DEFAULT_LIMIT,
            max_line_chars=MAX_LINE_CHARS,
            budget=self.max_output_chars - 1000,
        )
        meta = {"path": str(path), "total_lines": window.total, "first_line": first, "last_line": window.last}
        if window.total == 0:
            return ToolOutput(f"(The file {path} is empty: 0 lines.)", metadata=meta)
        if first > window.total:
            return ToolOutput(
                f"(The file {path} has {window.total} lines, so offset {first} is past its end. "
                f"Use an offset from 1 to {window.total}.)",
                metadata=meta,
            )
        body = "\n".join(f"{number}\t{line}" for number, line in enumerate(window.lines, start=first))
        shown = body
        summary = f"{window.total} line{'' if window.total == 1 else 's'}"
        if window.last < window.total:
            summary = f"lines {first}-{window.last} of {window.total}"
            body += (
                f"\n\n(Showing lines {first}-{window.last} of {window.total}. "
                f"To continue, call Read with offset={window.last + 1}.)"
            )
        return ToolOutput(body, metadata=meta, summary=summary, display=shown)
