"""Move: rename or move a file or directory."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from pydantic import Field

from goat_jupyter.errors import (
    ConflictError,
    FileNotFoundGoatError,
    InvalidInputError,
    ToolExecutionError,
)
from goat_jupyter.file_lock import locked
from goat_jupyter.state import FileReadState
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.files.delete import forget_tree, refuse_protected
from goat_jupyter.tools.notebook import refuse_notebook_rewrite


class MoveInput(ToolInput):
    from_: str = Field(alias="from", description="Existing path to move.")
    to: str = Field(description="Destination path.")
    overwrite: bool = Field(default=False, description="Replace the destination if it exists.")


def is_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def check_move(source: Path, target: Path, overwrite: bool) -> None:
    """Raise for every move we refuse, before touching anything."""
    if not os.path.lexists(source):
        raise FileNotFoundGoatError(f"{source} does not exist.")
    if source == target:
        raise InvalidInputError(f"Source and destination are the same path ({source}).")
    if is_dir(source) and source in target.parents:
        raise InvalidInputError(f"Cannot move directory {source} into itself ({target}).")
    if not os.path.lexists(target):
        return
    if not overwrite:
        what = "a directory" if is_dir(target) else "a file"
        raise ConflictError(
            f"{target} already exists ({what}). Give the full new path (e.g. {target / source.name} to move "
            "it inside that directory), or set overwrite=true to replace it."
        )
    if is_dir(target) and not is_dir(source):
        raise InvalidInputError(f"Cannot replace directory {target} with a file; delete it first.")
    if is_dir(source) and not is_dir(target):
        raise InvalidInputError(f"Cannot replace file {target} with a directory; delete it first.")
    if is_dir(target) and any(target.iterdir()):
        raise InvalidInputError(f"Cannot replace non-empty directory {target}; delete it first.")


def locked_move(source: Path, target: Path, overwrite: bool, reads: FileReadState) -> bool:
    """Check and move while holding both paths' locks, so no Write or Edit runs halfway through."""
    with locked(source, target):
        check_move(source, target, overwrite)
        return move(source, target, reads)


def move(source: Path, target: Path, reads: FileReadState) -> bool:
    """Do the move (across filesystems too); returns whether something was replaced."""
    replaced = os.path.lexists(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    for path in (source, target):
        reads.forget(path)
        if is_dir(path):
            forget_tree(reads, path)
    if is_dir(target):
        target.rmdir()  # empty, checked before; a directory is never moved *into* the target
    shutil.move(source, target)
    return replaced


class MoveTool(Tool[MoveInput]):
    name = "Move"
    deferred = True
    search_hint = "move or rename"
    input_model = MoveInput
    side_effect = "mutating"

    def title_for(self, args: MoveInput) -> str:
        return f"Move {args.from_} -> {args.to}"

    async def precheck(self, args: MoveInput, ctx: ToolContext) -> None:
        refuse_notebook_rewrite(ctx, ctx.resolve_path(args.from_), "move")
        refuse_notebook_rewrite(ctx, ctx.resolve_path(args.to), "replace")

    async def run(self, args: MoveInput, ctx: ToolContext) -> ToolOutput | str:
        source, target = ctx.resolve_path(args.from_), ctx.resolve_path(args.to)
        refuse_protected(source, ctx, "move")
        refuse_protected(target, ctx, "replace")
        refuse_notebook_rewrite(ctx, source, "move")
        refuse_notebook_rewrite(ctx, target, "replace")
        check_move(source, target, args.overwrite)
        try:
            replaced = await asyncio.to_thread(
                locked_move, source, target, args.overwrite, ctx.session.file_reads
            )
        except OSError as exc:
            raise ToolExecutionError(f"Could not move {source} to {target}: {exc.strerror or exc}") from None
        message = f"Moved {source} -> {target}" + (" (replaced the existing one)" if replaced else "")
        return ToolOutput(message, metadata={"from": str(source), "to": str(target), "replaced": replaced})
