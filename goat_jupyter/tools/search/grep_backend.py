"""Grep's search backends: the query, the per-file hits both return, and the ripgrep backend."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from goat_jupyter.errors import InvalidInputError, ToolExecutionError
from goat_jupyter.tools.search.ripgrep import RgResult, run_rg

OutputMode = Literal["content", "files_with_matches", "count"]
MAX_COLUMNS = 500  # longer lines are shown as a preview of this many characters (rg --max-columns)
LONG_LINE_MARK = " [... omitted end of long line]"  # what rg --max-columns-preview appends


@dataclass(frozen=True)
class GrepQuery:
    """One search, already resolved: `root` is an absolute file or folder."""

    pattern: str
    root: Path
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0


@dataclass
class FileHits:
    """A file with matches. In content mode `body` holds rg's lines for it, newline-separated:
    `N:text` (match), `N-text` (context) or `--` (gap). They are split only when shown."""

    path: str
    count: int = 0
    body: bytes = b""

    @property
    def lines(self) -> list[bytes]:
        return self.body.split(b"\n") if self.body else []

    @property
    def line_count(self) -> int:
        return self.body.count(b"\n") + 1 if self.body else 0


@dataclass
class SearchResult:
    files: list[FileHits]
    warning: str = ""  # e.g. output too large, results incomplete


class GrepBackend(Protocol):
    name: str

    async def search(self, query: GrepQuery) -> SearchResult: ...


class RipgrepBackend:
    """Runs the rg binary; parses its NUL-separated output into FileHits."""

    name = "ripgrep"

    def __init__(self, rg_path: str) -> None:
        self.rg_path = rg_path

    async def search(self, query: GrepQuery) -> SearchResult:
        cwd = query.root if query.root.is_dir() else query.root.parent
        result = await run_rg(self.rg_path, rg_arguments(query), cwd=cwd)
        if result.returncode == 2 and not result.stdout:
            raise _rg_error(result)
        warning = ""
        if result.overflowed:
            warning = "The search produced too much output and was stopped; results are incomplete."
        return SearchResult(parse_output(query.mode, result.stdout), warning)


def rg_arguments(query: GrepQuery) -> list[str]:
    """The rg command line for a query (the pattern goes after -e so a leading '-' is safe)."""
    args = ["--no-config", "--color=never", "--no-messages", "--null", "--with-filename"]
    args += [f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    for glob in query.globs:
        args.append(f"--glob={glob}")
    if query.file_type:
        args.append(f"--type={query.file_type}")
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count")
    else:
        args += [
            "--heading",
            "--line-number",
            f"--before-context={query.before}",
            f"--after-context={query.after}",
        ]
    return [*args, "--regexp", query.pattern, "--", str(query.root)]


def _rg_error(result: RgResult) -> Exception:
    message = result.stderr or f"ripgrep failed with exit code {result.returncode}"
    message = message.removeprefix("rg: ")
    if "regex" in message:
        return InvalidInputError(f"Invalid regular expression: {message}")
    if "glob" in message or "file type" in message:
        return InvalidInputError(f"Invalid search filter: {message}")
    return ToolExecutionError(f"ripgrep failed: {message}")


def decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_output(mode: OutputMode, stdout: bytes) -> list[FileHits]:
    if mode == "files_with_matches":
        return [FileHits(decode_path(p)) for p in stdout.split(b"\0") if p.strip(b"\n")]
    if mode == "count":
        hits: list[FileHits] = []
        for line in stdout.splitlines():
            path, sep, number = line.partition(b"\0")
            if sep and number.isdigit():
                hits.append(FileHits(decode_path(path), count=int(number)))
        return hits
    return parse_content(stdout)


def parse_content(stdout: bytes) -> list[FileHits]:
    """Split rg's --heading output: `path\\0` then the file's lines; a blank line between files.
    Every line starts with a line number or is `--`, so a blank line only ever separates files."""
    files: list[FileHits] = []
    for block in stdout.split(b"\n\n"):
        raw_path, sep, body = block.partition(b"\0")
        if sep:
            files.append(FileHits(decode_path(raw_path), body=body.removesuffix(b"\n")))
    return files
