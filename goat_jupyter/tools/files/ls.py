"""LS: list a directory with types, sizes and modification times."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import Field

from goat_jupyter.errors import FileNotFoundGoatError, ToolExecutionError
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

MAX_ENTRIES = 1000
EntryType = Literal["file", "directory", "symlink"]


class LSInput(ToolInput):
    path: str = Field(default=".", description="Directory to list (default: the cwd).")
    recursive: bool = Field(default=False, description="List subdirectories too.")
    include_hidden: bool = Field(default=False, description="Include entries whose name starts with '.'.")


@dataclass
class Entry:
    """One listed entry; `name` is relative to the listed directory (`sub/file.txt` when recursive)."""

    name: str
    type: EntryType
    size: int
    modified: str  # ISO 8601, local time with offset
    target: str | None = None  # where a symlink points


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=lambda: list[Entry]())
    truncated: bool = False
    unreadable: list[str] = field(default_factory=lambda: list[str]())


def describe(path: Path, name: str) -> Entry:
    """Type, size and mtime from lstat, so a symlink is reported as itself, never followed."""
    info = path.lstat()
    modified = (
        datetime.fromtimestamp(info.st_mtime, tz=timezone.utc).astimezone().isoformat(timespec="seconds")
    )
    if stat.S_ISLNK(info.st_mode):
        return Entry(name, "symlink", info.st_size, modified, os.readlink(path))
    kind: EntryType = "directory" if stat.S_ISDIR(info.st_mode) else "file"
    return Entry(name, kind, info.st_size, modified)


def sorted_children(folder: Path, include_hidden: bool) -> list[os.DirEntry[str]]:
    """Directories first, then everything else, each by name (case-insensitive, then exact)."""
    with os.scandir(folder) as scan:
        children = [e for e in scan if include_hidden or not e.name.startswith(".")]
    return sorted(children, key=lambda e: (not e.is_dir(follow_symlinks=False), e.name.casefold(), e.name))


def collect(folder: Path, recursive: bool, include_hidden: bool, limit: int = MAX_ENTRIES) -> Listing:
    """Depth-first: when recursive, each directory is followed by its own contents."""
    listing = Listing()
    _add_folder(listing, folder, "", recursive, include_hidden, limit)
    return listing


def _add_folder(
    listing: Listing, folder: Path, prefix: str, recursive: bool, include_hidden: bool, limit: int
) -> None:
    try:
        children = sorted_children(folder, include_hidden)
    except OSError as exc:
        if not prefix:
            raise ToolExecutionError(f"Cannot list {folder}: {exc.strerror or exc}") from None
        listing.unreadable.append(prefix)
        return
    for child in children:
        if len(listing.entries) >= limit:
            listing.truncated = True
            return
        try:
            entry = describe(Path(child.path), prefix + child.name)
        except OSError:  # removed while we were listing
            continue
        listing.entries.append(entry)
        if recursive and entry.type == "directory":
            _add_folder(listing, Path(child.path), entry.name + "/", recursive, include_hidden, limit)
            if listing.truncated:
                return


def format_entry(entry: Entry) -> str:
    size = "-" if entry.type == "directory" else str(entry.size)
    name = entry.name + ("/" if entry.type == "directory" else "")
    if entry.target is not None:
        name += f" -> {entry.target}"
    return f"{entry.type:<9} {size:>12}  {entry.modified}  {name}"


def render(path: Path, listing: Listing, *, single: bool = False) -> ToolOutput:
    entries = listing.entries
    dirs = sum(e.type == "directory" for e in entries)
    header = str(path) if single else f"{path} ({dirs} directories, {len(entries) - dirs} other entries)"
    lines = [header, *(format_entry(e) for e in entries)]
    if not entries:
        lines.append("(empty directory)")
    if listing.truncated:
        lines.append(f"(Stopped at {MAX_ENTRIES} entries; more exist. List a subdirectory or use Glob.)")
    if listing.unreadable:
        lines.append(f"(Could not read: {', '.join(listing.unreadable[:10])})")
    metadata = {"entries": [asdict(e) for e in entries], "truncated": listing.truncated}
    return ToolOutput("\n".join(lines), metadata=metadata)


class LSTool(Tool[LSInput]):
    name = "LS"
    deferred = True
    search_hint = "list a folder"
    input_model = LSInput
    side_effect = "read_only"

    def title_for(self, args: LSInput) -> str:
        return f"List {args.path}"

    async def run(self, args: LSInput, ctx: ToolContext) -> ToolOutput | str:
        path = ctx.resolve_path(args.path)
        if not os.path.lexists(path):
            raise FileNotFoundGoatError(f"{path} does not exist (cwd: {ctx.cwd}).")
        if not path.is_dir():
            return render(path, Listing([describe(path, path.name)]), single=True)
        listing = await asyncio.to_thread(collect, path, args.recursive, args.include_hidden)
        return render(path, listing)
