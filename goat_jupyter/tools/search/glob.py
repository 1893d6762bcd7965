"""Glob: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

from pydantic import Field
from wcmatch import glob as wcglob

from goat_jupyter.errors import FileNotFoundGoatError, InvalidInputError, InvalidPathError, ToolExecutionError
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.search.ripgrep import find_rg, run_rg
from goat_jupyter.tools.search.search_filter import Hidden, drop_denied, with_note

MAX_RESULTS = 100
GLOB_FLAGS = (
    wcglob.GLOBSTAR
    | wcglob.BRACE
    | wcglob.NEGATE
    | wcglob.NEGATEALL
    | wcglob.SPLIT
    | wcglob.EXTGLOB
    | wcglob.DOTGLOB
)
_LITERAL_CHARS = re.compile(r"[\[\]()]")
_MAGIC = re.compile(r"[*?\[\]{}()!|\\]")

_PLAIN_NAME = re.compile(r"[\w.\-*?,]*(?:\{[\w.\-*?,]*\}[\w.\-*?,]*)*")


class ListHint(NamedTuple):
    """What a lister may use to skip obvious non-matches: a file-name glob, and whether only the top
    folder can match."""

    name_glob: str
    top_only: bool


FileLister = Callable[[Path, ListHint | None], Awaitable[list[str]]]
"""Relative paths of the regular files under a folder (hidden and ignored too, never inside .git)."""


class GlobInput(ToolInput):
    pattern: str = Field(description='Glob pattern such as "**/*.py" or "src/**/*.{ts,tsx}".')
    path: str | None = Field(default=None, description="Folder to search in (default: the cwd).")


def rg_lister(rg: str) -> FileLister:
    """List files with `rg --files`: a parallel walker, much faster than Python on big trees."""

    async def list_files(root: Path, hint: ListHint | None) -> list[str]:
        args = ["--no-config", "--files", "--hidden", "--no-ignore", "--null", "--no-messages"]
        if hint:
            args += ["--glob", hint.name_glob, *(["--max-depth", "1"] if hint.top_only else [])]
        args += ["--glob", "!.git"]  # last: rg lets the last matching glob win
        result = await run_rg(rg, [*args, "--", str(root)], cwd=root)
        if result.returncode not in (0, 1) and not result.stdout:
            raise ToolExecutionError(f"Listing files under {root} failed: {result.stderr}")
        prefix = len(str(root).rstrip("/")) + 1
        return [p[prefix:] for p in result.stdout.decode("utf-8", "surrogateescape").split("\0") if p]

    return list_files


async def walk_lister(root: Path, hint: ListHint | None = None) -> list[str]:
    """Pure-Python lister with the same rules as rg_lister (symlinks are not followed or listed)."""
    return await asyncio.to_thread(_walk, root, hint is not None and hint.top_only)


def _walk(root: Path, top_only: bool = False) -> list[str]:
    found: list[str] = []
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name != ".git" and not top_only:
                    pending.append(rel)
            elif entry.name != ".git":
                found.append(rel)
    return found


def default_lister() -> FileLister:
    rg = find_rg()
    return rg_lister(rg) if rg else walk_lister


def split_pattern(base: Path, pattern: str) -> tuple[Path, str]:
    """Move the pattern's literal leading folders (and an absolute or `~` start) into the root.

    A part with glob characters that names an existing folder (`[id]`, `(dashboard)`) is literal too,
    and so is a last part that names an existing file."""
    if "|" in pattern:
        return base, pattern
    pattern = os.path.expanduser(pattern)
    root = Path("/") if pattern.startswith("/") else base
    parts = [p for p in pattern.lstrip("/").split("/")]
    literal = 0
    while literal < len(parts) - 1 and _is_literal(root.joinpath(*parts[: literal + 1]), parts[literal]):
        literal += 1
    root = Path(os.path.normpath(root.joinpath(*parts[:literal]))) if literal else root
    rest = [p for p in parts[literal:] if p not in ("", ".")]
    if len(rest) == 1 and _MAGIC.search(rest[0]) and os.path.isfile(root / rest[0]):
        rest = [wcglob.escape(rest[0])]
    return root, "/".join(rest)


def _is_literal(path: Path, part: str) -> bool:
    return not _MAGIC.search(part) or (part not in ("**", "*") and path.is_dir())


def every_file_below(pattern: str) -> str:
    """`dir/**` and `**` mean every file below, as users expect (wcmatch's `**` alone matches folders)."""
    return "|".join(_globstar_files(part) for part in pattern.split("|"))


def _globstar_files(part: str) -> str:
    return part + "/*" if part == "**" or part.endswith("/**") or part == "!**" else part


def list_hint(pattern: str) -> ListHint | None:
    """For `**/NAME` / `NAME` in plain glob syntax (which rg's --glob reads alike), a safe pre-filter."""
    top_only = not pattern.startswith("**/")
    name = pattern if top_only else pattern[3:]
    if ".." in name or not name or not _PLAIN_NAME.fullmatch(name):
        return None
    return ListHint(name, top_only)


def compile_matcher(pattern: str, *, fast: bool = True) -> Callable[[str], bool]:
    """wcmatch semantics (** / braces / !negation / extglob, dotfiles matched) for relative paths."""
    quick = _file_name_matcher(pattern) if fast else None
    if quick is not None:
        return quick
    wanted, unwanted = _translate(pattern)
    if wanted is None:
        return lambda rel_path: False

    def matches(rel_path: str) -> bool:
        return bool(wanted.match(rel_path)) and not (unwanted and unwanted.match(rel_path))

    return matches


def _file_name_matcher(pattern: str) -> Callable[[str], bool] | None:
    """`**/NAME` and `NAME` only need the file name tested: same regex, ten times cheaper."""
    any_depth = pattern.startswith("**/")
    name = pattern[3:] if any_depth else pattern
    if not name or "/" in name or "**" in name or "|" in name or name.startswith("!"):
        return None
    wanted, unwanted = _translate(name)
    if wanted is None or unwanted is not None:
        return None
    if any_depth:
        return lambda rel_path: bool(wanted.match(rel_path.rpartition("/")[2]))
    return lambda rel_path: "/" not in rel_path and bool(wanted.match(rel_path))


def _translate(pattern: str) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    try:
        include, exclude = wcglob.translate(pattern, flags=GLOB_FLAGS)
    except Exception as exc:  # wcmatch raises bare Exception subclasses for limits and bad patterns
        raise InvalidInputError(f"Invalid glob pattern {pattern!r}: {exc}") from None
    wanted = re.compile("|".join(f"(?:{r})" for r in include)) if include else None
    unwanted = re.compile("|".join(f"(?:{r})" for r in exclude)) if exclude else None
    return wanted, unwanted


def matching(pattern: str, listed: list[str]) -> Callable[[str], bool]:
    """The pattern's matcher; when its brackets and parentheses read literally name listed files
    (`**/[id]/page.tsx`), that literal reading wins."""
    literal = _LITERAL_CHARS.sub(r"\\\g<0>", pattern)
    if literal != pattern and "|" not in pattern:
        literal_match = compile_matcher(literal)
        if any(literal_match(rel) for rel in listed):
            return literal_match
    return compile_matcher(pattern)


def newest_first(paths: list[str]) -> list[tuple[float, str]]:
    """(mtime, path) pairs, most recently modified first; vanished files are dropped."""
    stamped: list[tuple[float, str]] = []
    for path in paths:
        try:
            stamped.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    stamped.sort(key=lambda item: (-item[0], item[1]))
    return stamped


class GlobTool(Tool[GlobInput]):
    name = "Glob"
    input_model = GlobInput
    side_effect = "read_only"

    def __init__(self, lister: FileLister | None = None) -> None:
        super().__init__()
        self._lister = lister

    def title_for(self, args: GlobInput) -> str:
        return f"Glob {args.pattern}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolOutput | str:
        base = ctx.resolve_path(args.path) if args.path else ctx.cwd
        if not base.exists():
            raise FileNotFoundGoatError(f"Folder {base} does not exist (cwd: {ctx.cwd}).")
        if not base.is_dir():
            raise InvalidPathError(f"{base} is a file, not a folder. Give a folder as path.")
        root, pattern = split_pattern(base, args.pattern)
        pattern = every_file_below(pattern)
        lister = self._lister or default_lister()
        searchable = root.is_dir() and ".git" not in root.parts  # .git is never entered
        listed = await lister(root, list_hint(pattern)) if searchable else []
        matches = matching(pattern, listed)
        hits = [os.path.join(root, rel) for rel in listed if matches(rel)]
        hits, hidden = drop_denied(hits, str, ctx, root)
        ranked = await asyncio.to_thread(newest_first, hits)
        return render(args.pattern, base, [path for _, path in ranked], hidden)


def render(pattern: str, base: Path, paths: list[str], hidden: Hidden) -> ToolOutput:
    if not paths:
        text = with_note(f"No files found matching {pattern!r} in {base}.", hidden)
        return ToolOutput(text, metadata={"count": 0})
    lines = paths[:MAX_RESULTS]
    if len(paths) > MAX_RESULTS:
        lines.append(
            f"(Showing the {MAX_RESULTS} most recently modified of {len(paths)} matching files. "
            "Use a more specific pattern or path to see the others.)"
        )
    metadata = {"count": len(paths), "truncated": len(paths) > MAX_RESULTS}
    return ToolOutput(with_note("\n".join(lines), hidden), metadata=metadata)
