"""Walk a tree the way ripgrep does, for the pure-Python Grep: the same hidden, ignore-file, --glob
and --type rules, in ripgrep's order of precedence. Ignore files are read with pathspec (gitignore
semantics; it comes with hatchling here), brace globs are expanded with bracex (a wcmatch dependency).
Not covered: git's global excludes file and ripgrep's rarer type definitions."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import bracex
from pathspec import GitIgnoreSpec

# Per folder, in ripgrep's precedence: the first kind with a verdict wins, the deepest folder within a kind.
IGNORE_KINDS = (".rgignore", ".ignore", ".gitignore", "info/exclude")
GIT_ONLY_KINDS = (".gitignore", "info/exclude")  # only inside a git repository, like rg's default

FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.[ch]pp", "*.[ch]xx", "*.cc", "*.hh", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "go": ("*.go",),
    "h": ("*.h", "*.hh", "*.hpp"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"),
    "json": ("*.json", "*.sarif", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "jupyter": ("*.ipynb", "*.jpynb"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "r": ("*.R", "*.Rmd", "*.Rnw", "*.r", "*.rmd", "*.rnw"),
    "rst": ("*.rst",),
    "rust": ("*.rs",),
    "sh": ("*.bash", "*.csh", "*.ksh", "*.sh", "*.tcsh", "*.zsh", ".bashrc", ".profile", ".zshrc"),
    "sql": ("*.psql", "*.sql"),
    "tex": ("*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "typescript": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xsd", "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
}


@dataclass
class FolderRules:
    """The ignore files of one folder, and whether the folder holds a `.git`."""

    folder: Path
    specs: dict[str, GitIgnoreSpec] = field(default_factory=lambda: dict[str, GitIgnoreSpec]())
    has_git: bool = False
    # Rules that match the search root or a folder between it and this one. pathspec (like git) then
    # ignores everything below; rg tests only the paths it walks, so an ignored folder searched on
    # purpose is searched. Verdicts from these rules are skipped.
    inherited: dict[str, set[int]] = field(default_factory=lambda: dict[str, set[int]]())


def load_rules(folder: Path) -> FolderRules:
    rules = FolderRules(folder, has_git=(folder / ".git").exists())
    for kind in IGNORE_KINDS:
        source = folder / ".git" / kind if kind == "info/exclude" else folder / kind
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rules.specs[kind] = GitIgnoreSpec.from_lines(text.splitlines())
    return rules


def _glob_spec(globs: Sequence[str]) -> GitIgnoreSpec | None:
    lines = [expanded for glob in globs for expanded in bracex.expand(glob)]
    return GitIgnoreSpec.from_lines(lines) if lines else None


class RipgrepFilter:
    """Decides, per folder entry, what ripgrep's default walk would do with it."""

    def __init__(self, root: Path, globs: Sequence[str], type_globs: Sequence[str]) -> None:
        self.root = root
        self.overrides = _glob_spec(globs)
        self.has_whitelist = any(not g.startswith("!") for g in globs)
        self.type_globs = tuple(type_globs)

    def keep(self, path: Path, is_dir: bool, stack: Sequence[FolderRules]) -> bool:
        """`stack` holds the rules of every folder from / down to the entry's parent."""
        if self.overrides is not None:
            verdict = self.overrides.check_file(_rel(path, self.root, is_dir)).include
            if verdict is not None:
                return verdict  # a --glob match beats ignore files and hiddenness; `!glob` excludes
            if not is_dir and self.has_whitelist:
                return False
        ignored = _ignore_verdict(path, is_dir, stack)
        if ignored:
            return False
        whitelisted = ignored is False
        if self.type_globs and not is_dir:
            if not any(fnmatch.fnmatchcase(path.name, g) for g in self.type_globs):
                return False
            whitelisted = True
        return whitelisted or not path.name.startswith(".")


def _rel(path: Path, folder: Path, is_dir: bool) -> str:
    rel = os.path.relpath(path, folder).replace(os.sep, "/")
    return rel + "/" if is_dir else rel


def _ignore_verdict(path: Path, is_dir: bool, stack: Sequence[FolderRules]) -> bool | None:
    """True: ignored; False: re-included by a `!` rule; None: no ignore file mentions it."""
    in_git = any(rules.has_git for rules in stack)
    for kind in IGNORE_KINDS:
        if kind in GIT_ONLY_KINDS and not in_git:
            continue
        for rules in reversed(stack):
            spec = rules.specs.get(kind)
            if spec is None:
                continue
            result = spec.check_file(_rel(path, rules.folder, is_dir))
            if result.include is not None and result.index not in rules.inherited.get(kind, ()):
                return result.include
    return None


def _mark_inherited(rules: FolderRules, root: Path) -> FolderRules:
    """Record which of an enclosing folder's rules match the root or folders on the way to it."""
    between = [root, *(p for p in root.parents if rules.folder in p.parents)]
    for kind, spec in rules.specs.items():
        for folder in between:
            result = spec.check_file(_rel(folder, rules.folder, True))
            if result.include is not None and result.index is not None:
                rules.inherited.setdefault(kind, set()).add(result.index)
    return rules


def searchable_files(root: Path, globs: Sequence[str] = (), type_globs: Sequence[str] = ()) -> Iterator[Path]:
    """Files rg would search under `root` (symlinks are not followed); a file root is always searched."""
    if root.is_file():
        yield root
        return
    rule_filter = RipgrepFilter(root, globs, type_globs)
    stack = [_mark_inherited(load_rules(folder), root) for folder in reversed([root, *root.parents])]
    yield from _walk(root, rule_filter, stack)


def _walk(folder: Path, rule_filter: RipgrepFilter, stack: list[FolderRules]) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            continue
        is_dir = entry.is_dir()
        if not rule_filter.keep(path, is_dir, stack):
            continue
        if is_dir:
            yield from _walk(path, rule_filter, [*stack, load_rules(path)])
        elif entry.is_file():
            yield path
