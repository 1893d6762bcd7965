"""Delete: remove a file or directory."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import FileNotFoundGoatError, InvalidInputError, InvalidPathError, ToolExecutionError
from goat_jupyter.file_lock import locked
from goat_jupyter.state import FileReadState
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.notebook import refuse_notebook_rewrite


class DeleteInput(ToolInput):
    path: str = Field(description="File or directory to delete.")
    recursive: bool = Field(default=False, description="Required to delete a non-empty directory.")


def refuse_protected(path: Path, ctx: ToolContext, verb: str) -> None:
    """Never remove or move `/`, the home folder, the workspace or a folder that contains it."""
    protected = {Path("/"), Path.home(), ctx.workspace, *ctx.workspace.parents}
    if path in protected:
        raise InvalidPathError(
            f"Refusing to {verb} {path}: it is the filesystem root, the home folder, the workspace "
            f"({ctx.workspace}) or one of its parents."
        )


def forget_tree(reads: FileReadState, path: Path) -> int:
    """Drop read records for every file below a directory; returns how many files it holds."""
    files = 0
    for folder, _, names in os.walk(path):
        files += len(names)
        for name in names:
            reads.forget(Path(folder) / name)
    return files


def remove(path: Path, recursive: bool, reads: FileReadState) -> str:
    """Delete under the path's lock (no Write or Edit of it runs halfway through) and say what went."""
    with locked(path):
        return _remove(path, recursive, reads)


def _remove(path: Path, recursive: bool, reads: FileReadState) -> str:
    """A symlink is removed itself, never followed."""
    if path.is_symlink() or not path.is_dir():
        kind = "symlink" if path.is_symlink() else "file"
        path.unlink()
        return f"Deleted {kind} {path}"
    entries = sum(1 for _ in os.scandir(path))
    if entries == 0:
        path.rmdir()
        return f"Deleted empty directory {path}"
    if not recursive:
        raise InvalidInputError(
            f"{path} is a directory with {entries} entries. Set recursive=true to delete it with its contents."
        )
    files = forget_tree(reads, path)
    shutil.rmtree(path)
    return f"Deleted directory {path} and everything in it ({files} files)"


class DeleteTool(Tool[DeleteInput]):
    name = "Delete"
    deferred = True
    input_model = DeleteInput
    side_effect = "mutating"

    def title_for(self, args: DeleteInput) -> str:
        return f"Delete {args.path}"

    async def precheck(self, args: DeleteInput, ctx: ToolContext) -> None:
        refuse_notebook_rewrite(ctx, ctx.resolve_path(args.path), "delete")

    async def run(self, args: DeleteInput, ctx: ToolContext) -> ToolOutput | str:
        path = ctx.resolve_path(args.path)
        refuse_protected(path, ctx, "delete")
        refuse_notebook_rewrite(ctx, path, "delete")
        if not os.path.lexists(path):
            raise FileNotFoundGoatError(f"{path} does not exist (cwd: {ctx.cwd}).")
        was_dir = path.is_dir() and not path.is_symlink()
        try:
            message = await asyncio.to_thread(remove, path, args.recursive, ctx.session.file_reads)
        except OSError as exc:
            raise ToolExecutionError(f"Could not delete {path}: {exc.strerror or exc}") from None
        ctx.session.file_reads.forget(path)
        return ToolOutput(message, metadata={"deleted": [str(path)], "directory": was_dir})
