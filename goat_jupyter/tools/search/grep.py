"""Grep: search file contents with ripgrep (or the pure-Python fallback), then sort and page."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from pydantic import Field

from goat_jupyter.errors import FileNotFoundGoatError
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.search.glob import newest_first
from goat_jupyter.tools.search.grep_backend import (
    FileHits,
    GrepBackend,
    GrepQuery,
    OutputMode,
    RipgrepBackend,
    SearchResult,
)
from goat_jupyter.tools.search.grep_fallback import PythonGrepBackend
from goat_jupyter.tools.search.ripgrep import find_rg
from goat_jupyter.tools.search.search_filter import drop_denied, with_note

DEFAULT_HEAD_LIMIT = 250
_LINE_PREFIX = re.compile(rb"(\d+)([:-])")


def default_backend() -> GrepBackend:
    """ripgrep when its binary is available, else the pure-Python search."""
    rg = find_rg()
    if rg is not None:
        return RipgrepBackend(rg)
    return PythonGrepBackend()


class GrepInput(ToolInput):
    pattern: str = Field(description="Regular expression (ripgrep syntax) to search for.")
    path: str | None = Field(default=None, description="File or folder to search (default: the cwd).")
    glob: str | None = Field(default=None, description='Only files matching this glob, e.g. "*.py".')
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: file paths; count: matches per file.",
    )
    before: int | None = Field(default=None, alias="-B", ge=0, description="Lines of context before.")
    after: int | None = Field(default=None, alias="-A", ge=0, description="Lines of context after.")
    context: int | None = Field(default=None, alias="-C", ge=0, description="Lines of context around.")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description="Show line numbers (content mode)."
    )
    case_insensitive: bool | None = Field(default=None, alias="-i", description="Ignore case.")
    type: str | None = Field(default=None, description='ripgrep file type, e.g. "py", "js".')
    head_limit: int | None = Field(
        default=None, ge=0, description="At most this many entries (default 250, 0 = all)."
    )
    offset: int | None = Field(default=None, ge=0, description="Skip this many entries first.")
    multiline: bool | None = Field(default=None, description="Let . and patterns span lines.")


def split_globs(raw: str | None) -> tuple[str, ...]:
    """Whitespace separates globs; so do commas, except inside `{a,b}` alternatives."""
    globs: list[str] = []
    for piece in (raw or "").split():
        globs.extend([piece] if "{" in piece else [g for g in piece.split(",") if g])
    return tuple(globs)


class ContentLines:
    """Every file's content lines (with `--` between files when there is context), formatted only
    for the window that is shown: a broad search can produce hundreds of thousands of lines."""

    def __init__(self, files: list[FileHits], separate: bool, line_numbers: bool) -> None:
        self.files = files
        self.separate = separate
        self.line_numbers = line_numbers
        self.sizes = [f.line_count + (1 if separate and i else 0) for i, f in enumerate(files)]

    def __len__(self) -> int:
        return sum(self.sizes)

    def window(self, start: int, end: int) -> list[str]:
        shown: list[str] = []
        position = 0
        for index, (hits, size) in enumerate(zip(self.files, self.sizes, strict=True)):
            if position >= end:
                break
            if position + size > start:
                raw = [b"--"] if self.separate and index else []
                raw += hits.lines
                first, last = max(0, start - position), end - position
                shown.extend(_content_line(hits.path, line, self.line_numbers) for line in raw[first:last])
            position += size
        return shown


@dataclass
class Page:
    """The requested slice of all entries."""

    entries: list[str] | ContentLines
    offset: int
    limit: int

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def shown(self) -> list[str]:
        end = self.offset + self.limit if self.limit else self.total
        if isinstance(self.entries, ContentLines):
            return self.entries.window(self.offset, end)
        return self.entries[self.offset : end]

    def note(self, shown: int) -> str:
        if self.offset + shown >= self.total:
            return f"[Skipped the first {self.offset} entries.]" if self.offset and shown else ""
        first, last = self.offset + 1, self.offset + shown
        return (
            f"[Showing entries {first}-{last} of {self.total}. "
            f"Call again with offset={last} to see more, or narrow the search.]"
        )


class GrepTool(Tool[GrepInput]):
    name = "Grep"
    input_model = GrepInput
    side_effect = "read_only"
    spills = False  # pages by offset/head_limit itself, and is how a stored output is searched

    def __init__(self, backend: GrepBackend | None = None) -> None:
        super().__init__()
        self._backend = backend

    @property
    def backend(self) -> GrepBackend:
        if self._backend is None:
            self._backend = default_backend()
        return self._backend

    def title_for(self, args: GrepInput) -> str:
        return f"Grep {args.pattern!r}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolOutput | str:
        query = build_query(args, ctx)
        result = await self.backend.search(query)
        files, hidden = drop_denied(result.files, lambda hits: hits.path, ctx, query.root)
        if not files:
            text = with_note(f"No matches found for {args.pattern!r} in {query.root}.", hidden)
            return ToolOutput(
                _with_warning(text, result), metadata={"total": 0, "backend": self.backend.name}
            )
        limit = DEFAULT_HEAD_LIMIT if args.head_limit is None else args.head_limit
        entries = await list_entries(query, files, line_numbers=args.line_numbers is not False)
        page = Page(entries, args.offset or 0, limit)
        shown = page.shown
        return ToolOutput(
            _with_warning(with_note(format_page(query, page, shown, files), hidden), result),
            metadata={
                "mode": query.mode,
                "backend": self.backend.name,
                "files": len(files),
                "total": page.total,
                "shown": len(shown),
                "truncated": page.offset + len(shown) < page.total,
            },
        )


def build_query(args: GrepInput, ctx: ToolContext) -> GrepQuery:
    root = ctx.resolve_path(args.path) if args.path else ctx.cwd
    if not root.exists():
        raise FileNotFoundGoatError(f"Path {root} does not exist (cwd: {ctx.cwd}).")
    content = args.output_mode == "content"
    around = args.context or 0
    return GrepQuery(
        pattern=args.pattern,
        root=root,
        mode=args.output_mode,
        globs=split_globs(args.glob),
        file_type=args.type,
        ignore_case=bool(args.case_insensitive),
        multiline=bool(args.multiline),
        before=(args.before if args.before is not None else around) if content else 0,
        after=(args.after if args.after is not None else around) if content else 0,
    )


async def list_entries(
    query: GrepQuery, files: list[FileHits], *, line_numbers: bool
) -> list[str] | ContentLines:
    """Files newest first; counts and content lines by path, each file's lines in order."""
    if query.mode == "files_with_matches":
        ranked = await asyncio.to_thread(newest_first, [f.path for f in files])
        return [path for _, path in ranked]
    files = sorted(files, key=lambda f: f.path)
    if query.mode == "count":
        return [f"{f.path}:{f.count}" for f in files]
    return ContentLines(files, query.before > 0 or query.after > 0, line_numbers)


def _content_line(path: str, raw: bytes, line_numbers: bool) -> str:
    found = _LINE_PREFIX.match(raw)
    if found is None:
        return raw.decode("utf-8", "replace")  # the `--` between context groups
    number, mark = found.group(1).decode(), found.group(2).decode()
    text = raw[found.end() :].decode("utf-8", "replace").removesuffix("\r")
    return f"{path}{mark}{number}{mark}{text}" if line_numbers else f"{path}{mark}{text}"


def format_page(query: GrepQuery, page: Page, shown: list[str], files: list[FileHits]) -> str:
    if not shown:
        return f"No entries at offset {page.offset}: the search found {page.total}."
    lines = list(shown)
    if query.mode == "files_with_matches":
        lines.insert(0, f"Found {_plural(page.total, 'file')}")
    if query.mode == "count":
        total = sum(f.count for f in files)
        unit = "match" if query.multiline else "matching line"
        lines.append(f"Total: {_plural(total, unit)} in {_plural(len(files), 'file')}.")
    note = page.note(len(shown))
    return _safe_text("\n".join([*lines, note] if note else lines))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "es" if noun.endswith("ch") else "s")


def _with_warning(text: str, result: SearchResult) -> str:
    return f"{text}\n[{result.warning}]" if result.warning else text


def _safe_text(text: str) -> str:
    """Undecodable file-name bytes become U+FFFD so the text can always be encoded."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
