"""Edit: string replacement in a file (exact, else one unique near match)."""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from pydantic import Field

from goat_jupyter.errors import ConflictError, InvalidInputError, InvalidPathError, ToolExecutionError
from goat_jupyter.file_lock import locked
from goat_jupyter.fileio import (
    ABSENT,
    DiskVersion,
    TextFormat,
    count_lines,
    decode_text,
    missing_file_error,
    os_errors,
    read_versioned,
    sniff_binary,
    write_text_atomic,
)
from goat_jupyter.state import FileReadState, LineRange, describe_ranges
from goat_jupyter.text import cut_line
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.files.edit_match import Replacement, apply, find_matches, look_alikes, plan
from goat_jupyter.tools.files.placeholders import refuse_placeholders
from goat_jupyter.tools.files.write import ensure_parent, refuse_folder_path
from goat_jupyter.tools.notebook import refuse_notebook_rewrite

CONTEXT_LINES = 4
MAX_LINE_CHARS = 2000
MAX_DIFF_LINES = 80
DIFF_CONTEXT = 3  # difflib's default
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


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
    """difflib's unified diff, run only on the lines between the common head and tail (plus context):
    the same output, without difflib's slow matching over a big file's unchanged lines."""
    old, new = before.splitlines(), after.splitlines()
    head = _common_head(old, new)
    tail = _common_head(old[head:][::-1], new[head:][::-1])
    start = max(head - DIFF_CONTEXT, 0)
    keep_tail = max(tail - DIFF_CONTEXT, 0)
    lines = difflib.unified_diff(
        old[start : len(old) - keep_tail],
        new[start : len(new) - keep_tail],
        str(path),
        str(path),
        lineterm="",
    )
    return "\n".join(_shift_hunk(line, start) for line in lines)


def _common_head(a: list[str], b: list[str]) -> int:
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def _shift_hunk(line: str, offset: int) -> str:
    if not offset or not line.startswith("@@ "):
        return line
    match = _HUNK.match(line)
    if match is None:
        return line
    old_start, old_len, new_start, new_len = match.groups(default="")
    rest = line[match.end() :]
    return f"@@ -{int(old_start) + offset}{old_len} +{int(new_start) + offset}{new_len} @@{rest}"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find_replacements(
    text: str, old: str, new: str, replace_all: bool, path: Path
) -> tuple[list[Replacement], str]:
    """Where old_string goes (exact, else a unique near match) and what replaces it there."""
    matches = find_matches(text, old)
    if matches is None:
        raise InvalidInputError(
            f"old_string was not found in {path}; the file is unchanged. It must match the file's text (near "
            "misses in indentation, whitespace or quote style are tolerated only when they point to one place): "
            "Read the file again and copy the text from it."
        )
    places = matches.spans
    if matches.strategy != "exact" and not replace_all and len(places) == 1:
        places = max(places, look_alikes(text, old), key=len)
    count = len(places)
    if count > 1 and not replace_all:
        lines = ", ".join(str(_line_of(text, start)) for start, _ in places[:10])
        how = "" if matches.strategy == "exact" else f" with the {matches.strategy} fallback (no exact match)"
        raise InvalidInputError(
            f"old_string occurs {count} times in {path}{how}, at lines {lines}; the file is unchanged. Add "
            "surrounding lines to old_string so it matches exactly one place, or set replace_all to true to "
            "change every one."
        )
    return plan(text, matches, old, new, replace_all), matches.strategy


def updated_text(text: str, old: str, replacements: list[Replacement], strategy: str) -> str:
    """The edited text; exact replacements of old_string go through str.replace (one pass, no copies)."""
    if strategy == "exact" and old and all(r.end - r.start == len(old) for r in replacements):
        return text.replace(old, replacements[0].text, len(replacements))
    return apply(text, replacements)


def line_moves(
    text: str, replacements: list[Replacement]
) -> tuple[Callable[[LineRange], LineRange], list[LineRange]]:
    """Where a range of lines of `text` is after the edit, and the line ranges the edit wrote."""
    regions: list[tuple[int, int, int, int]] = []  # old first/last line, new first/last line
    shift, first, counted = 0, 1, 0
    for item in replacements:  # line numbers counted incrementally: replace_all may give thousands
        first += text.count("\n", counted, item.start)
        counted = item.start
        old_breaks = text.count("\n", item.start, item.end)
        new_breaks = item.text.count("\n")
        regions.append((first, first + old_breaks, first + shift, first + shift + new_breaks))
        shift += new_breaks - old_breaks

    def line(number: int, end: bool) -> int:
        moved = 0
        for old_first, old_last, new_first, new_last in regions:
            if number < old_first:
                break
            if number <= old_last:
                return new_last if end else new_first
            moved = new_last - old_last
        return number + moved

    written = [(new_first, new_last) for _, _, new_first, new_last in regions]
    return lambda r: (line(r[0], False), line(r[1], True)), written


def to_file_newlines(text: str, value: str) -> str:
    """old/new_string in the file's line-ending style (text is in LF form unless the file mixes styles)."""
    return value if "\r\n" in text else value.replace("\r\n", "\n")


def create_file(path: Path, content: str, reads: FileReadState) -> ToolOutput:
    """An Edit with an empty old_string on a missing file: create it with new_string."""
    ensure_parent(path)
    write_text_atomic(path, content, TextFormat(), expected=ABSENT)
    reads.record(path)
    meta = {"path": str(path), "diff": unified_diff(path, "", content), "replacements": 0}
    snippet = numbered_snippet(content, 0, len(content)) if content else "(empty)"
    return ToolOutput(f"Created {path} ({count_lines(content)} lines):\n{snippet}", metadata=meta)


def edit_file(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> ToolOutput:
    """Apply one Edit to `path` under its lock, keeping its encoding, line endings and mode."""
    with locked(path):
        return _edit_locked(path, args, reads, cwd)


def _edit_locked(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> ToolOutput:
    if not path.exists() and args.old_string == "":
        return create_file(path, args.new_string, reads)
    plan_ = planned_edit(path, args, reads, cwd)
    write_text_atomic(path, plan_.updated, plan_.fmt, expected=DiskVersion.of(plan_.stat))
    reads.record_edit(path, *line_moves(plan_.text, plan_.replacements))
    return edit_result(path, plan_.text, plan_.updated, plan_.replacements, plan_.strategy)


class EditPlan(NamedTuple):
    text: str
    fmt: TextFormat
    stat: os.stat_result
    replacements: list[Replacement]
    strategy: str
    updated: str


def planned_edit(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> EditPlan:
    """What an Edit of an existing file would write; raises what the Edit would (read-before-write
    first, so a file the model never read gives nothing away)."""
    if not path.exists():
        raise missing_file_error(path, cwd)
    if path.is_dir():
        raise InvalidPathError(f"{path} is a directory; Edit changes files.")
    data, stat = read_versioned(path)
    reads.check_content(path, stat, lambda: hashlib.sha256(data).hexdigest())
    if (reason := sniff_binary(path)) is not None:
        raise ToolExecutionError(f"{path} looks like a binary file ({reason}); Edit only changes text files.")
    text, fmt = decode_text(data)
    replacements, strategy, updated = plan_edit(
        text, args.old_string, args.new_string, args.replace_all, path
    )
    if strategy != "exact":
        refuse_unseen_near_match(path, text, replacements, reads)
    return EditPlan(text, fmt, stat, replacements, strategy, updated)


def check_arguments(path: Path, args: EditInput) -> None:
    if path.suffix.lower() == ".ipynb":
        raise InvalidInputError(f"{path} is a notebook: use NotebookEdit to change its cells.")
    if args.old_string == args.new_string:
        raise InvalidInputError("old_string and new_string are identical, so nothing would change.")


def precheck_edit(path: Path, args: EditInput, reads: FileReadState, cwd: Path) -> None:
    """Everything the Edit would fail on, without writing (run before asking the user)."""
    check_arguments(path, args)
    if path.exists() or args.old_string != "":
        with locked(path):  # a concurrent Edit's write and its read record change together
            planned_edit(path, args, reads, cwd)


def refuse_unseen_near_match(
    path: Path, text: str, replacements: list[Replacement], reads: FileReadState
) -> None:
    """A near match is trusted only where the model has seen the file: an exact old_string proves it
    knows the text, a near miss in lines it never read does not."""
    unread = reads.unseen_between(path, 1, count_lines(text) or 1)
    first, counted = 1, 0
    for item in replacements:
        first += text.count("\n", counted, item.start)
        counted = item.start
        last = first + text.count("\n", item.start, max(item.start, item.end - 1))
        gaps = [(max(a, first), min(b, last)) for a, b in unread if a <= last and b >= first]
        if gaps:
            raise ConflictError(
                f"old_string did not match {path} exactly, and its closest match (lines {first}-{last}) is in "
                f"lines {describe_ranges(gaps)} that were not read in this session; the file is unchanged. Read "
                f"those lines (offset={gaps[0][0]}) and copy old_string from them."
            )


def plan_edit(
    text: str, old_string: str, new_string: str, replace_all: bool, path: Path
) -> tuple[list[Replacement], str, str]:
    """What an Edit of `text` replaces, which strategy found it, and the new text (raises like Edit).
    The approval preview uses it too, so it shows what the Edit will really do."""
    old, new = to_file_newlines(text, old_string), to_file_newlines(text, new_string)
    if old == "":
        if text.strip():
            raise InvalidInputError(
                f"{path} already has content: an empty old_string only creates a new file or fills an empty "
                "one. Give the exact text to replace."
            )
        replacements, strategy = [Replacement(0, len(text), new)], "exact"
    else:
        replacements, strategy = find_replacements(text, old, new, replace_all, path)
    refuse_placeholders(path, new, old, "new_string")
    return replacements, strategy, updated_text(text, old, replacements, strategy)


def edit_result(
    path: Path, before: str, after: str, replacements: list[Replacement], strategy: str
) -> ToolOutput:
    first = replacements[0]
    snippet = numbered_snippet(after, first.start, first.start + len(first.text))
    count = len(replacements)
    times = "1 occurrence" if count == 1 else f"all {count} occurrences"
    shown = " (the first one shown)" if count > 1 else ""
    diff = unified_diff(path, before, after)
    meta = {"path": str(path), "diff": diff, "replacements": count, "match": strategy}
    if strategy == "exact":
        text = f"Edited {path}: replaced {times}{shown}. The changed region now reads:\n{snippet}"
        return ToolOutput(text, metadata=meta)
    text = (
        f"Edited {path}: old_string did not match exactly, so the {strategy} fallback was used (it found "
        f"{'one place' if count == 1 else f'{count} places'}); replaced {times}. Check the diff:\n"
        f"{cut_lines(diff, MAX_DIFF_LINES)}\n\nThe changed region now reads:\n{snippet}"
    )
    return ToolOutput(text, metadata=meta)


def cut_lines(text: str, limit: int) -> str:
    lines = text.split("\n")
    if len(lines) <= limit:
        return text
    return "\n".join([*lines[:limit], f"... ({len(lines) - limit} more diff lines)"])


class EditTool(Tool[EditInput]):
    name = "Edit"
    input_model = EditInput
    side_effect = "mutating"

    def title_for(self, args: EditInput) -> str:
        return f"Edit {args.file_path}"

    async def precheck(self, args: EditInput, ctx: ToolContext) -> None:
        refuse_folder_path(args.file_path)
        path = ctx.resolve_path(args.file_path)
        refuse_notebook_rewrite(ctx, path, "edit")
        with os_errors(path, "editing"):
            await asyncio.to_thread(precheck_edit, path, args, ctx.session.file_reads, ctx.cwd)

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolOutput | str:
        refuse_folder_path(args.file_path)
        path = ctx.resolve_path(args.file_path)
        check_arguments(path, args)
        refuse_notebook_rewrite(ctx, path, "edit")
        with os_errors(path, "editing"):
            return await asyncio.to_thread(edit_file, path, args, ctx.session.file_reads, ctx.cwd)
