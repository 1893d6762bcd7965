"""Permission rules in Claude Code's syntax: parsing, and matching one rule against one call.

- `Tool` covers the whole tool; `Read` also covers Glob/Grep/LS and `Edit` also Write/NotebookEdit
  (and, for deny/ask only, Move and Delete; a Move is allowed by `Move` or `Delete` rules only). A bare allow rule covers calls inside the workspace only:
  outside it, only a path rule that names the place (`Edit(//tmp/out/**)`) allows.
- `Bash(git diff:*)`: the command's words start with `git diff` (word boundary: not `git diffx`).
  `Bash(npm *)`: `*` matches anything; a trailing ` *` also matches `npm` alone. `Bash(npm test)`:
  exactly that command. Lines are parsed as bash (permissions_shell): every command that can run
  counts, in compound commands, substitutions and behind wrappers (`sudo`, `bash -c`, `xargs`...).
  An allow needs every command covered and a certain analysis; a deny or ask rule hits when any
  command matches (also with `VAR=x` prefixes or a path on the command name removed) and, when the
  analysis is uncertain, any run of words in the line. Allow rules never cover a command that
  redirects output into a file (unless the rule names that exact line).
- Paths, gitignore-style: `//abs/**` from the file system root, `~/x` from home, `/x` and `./x`
  from the workspace root (the settings file's project), `x` from the workspace and, without a
  slash, at any depth. Symlinks: allow rules must match the real path, deny/ask either one.
- `WebFetch(domain:example.com)` is exactly that host (any port); subdomains need their own rule
  or `domain:*.example.com`. No allow rule covers WebFetch methods other than GET/HEAD.
- `mcp__server__tool`, `mcp__server__*` and `mcp__server` (every tool of that server).
- `KernelInspect(df.shape)`, `RunCell(<source>)`: exactly that expression or cell source (no
  wildcards: `*` is a star); the bare tool name covers all code.
- `RunCell(tag:train)`, `NotebookEdit(tag:db)` (or `Edit(tag:db)`): a cell carrying that tag
  (case and spaces aside; permissions/cell_tags.py); never a call that acts on no cell.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from wcmatch import glob

from goat_jupyter.permissions.cell_tags import tag_rule_key
from goat_jupyter.permissions.shell import ShellAnalysis, Subcommand, analyse
from goat_jupyter.permissions.shell.shapes import Tokens, overlaps
from goat_jupyter.permissions.shell.syntax import Shape, fold_ascii, joined

RuleKind = Literal["allow", "deny", "ask"]

_RULE = re.compile(r"^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$", re.DOTALL)
_GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.EXTGLOB
_PATTERN_MAGIC = frozenset("*?[]{}()!@+|\\")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# A name no real file has: matching `<folder>/<probe>` asks "does the rule cover this folder's files?"
_PROBE = "\x01goat-any-file\x01"


@dataclass(frozen=True)
class Rule:
    """One rule: the tool part (`Bash`, `Edit`, `mcp__srv__*`) and the optional part in brackets."""

    text: str
    tool: str
    specifier: str | None = None


@dataclass(frozen=True)
class Anchors:
    """The folders that path rules are anchored to: `/x`, `./x` and `x` to the workspace, `~/x` to home."""

    workspace: Path
    home: Path
    real_workspace: Path
    real_home: Path

    @classmethod
    def of(cls, workspace: Path, home: Path) -> Anchors:
        return cls(workspace, home, Path(os.path.realpath(workspace)), Path(os.path.realpath(home)))


# Folders with more entries than this are not listed: deny and ask path rules then match (fail closed).
MAX_FOLDER_ENTRIES = 20_000


class FolderWalk:
    """What lies below a folder a call moves, replaces or deletes (POSIX paths relative to it),
    listed once, when a deny or ask path rule first needs it. Symlinks are listed, not followed."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    @classmethod
    def of(cls, path: Path) -> FolderWalk:
        return cls(path if path.is_dir() and not path.is_symlink() else None)

    @property
    def names(self) -> tuple[str, ...] | None:
        """Every path below the folder; None when there are too many to check."""
        return None if self._listing is None else self._listing[0]

    @property
    def folders(self) -> frozenset[str]:
        """The folders among `names` (empty when there were too many to list)."""
        return frozenset() if self._listing is None else self._listing[1]

    @functools.cached_property
    def _listing(self) -> tuple[tuple[str, ...], frozenset[str]] | None:
        found: list[str] = []
        folders: list[str] = []
        if self.root is None:
            return (), frozenset()
        for folder, dirs, files in os.walk(self.root):
            rel = Path(os.path.relpath(folder, self.root)).as_posix()
            inside = [name if rel == "." else f"{rel}/{name}" for name in dirs]
            folders += inside
            found += inside + [name if rel == "." else f"{rel}/{name}" for name in files]
            if len(found) > MAX_FOLDER_ENTRIES:
                return None
        return tuple(found), frozenset(folders)


@dataclass(frozen=True)
class Target:
    """A path a call touches, as written (normalised) and with symlinks resolved. `below` is set
    when the call acts on whatever the path holds (a folder moved, deleted or replaced as a whole):
    deny and ask rules on any path inside it then apply too."""

    path: Path
    real: Path
    below: FolderWalk | None = field(default=None, compare=False)

    @classmethod
    def of(cls, path: Path, below: FolderWalk | None = None) -> Target:
        return cls(path, Path(os.path.realpath(path)), below)


@dataclass(frozen=True)
class Access:
    """More paths of a call that deny and ask rules named `names` check (a Move's source is also
    read and removed, so Read and Delete deny rules cover it)."""

    names: tuple[str, ...]
    paths: tuple[Target, ...]


@dataclass(frozen=True)
class CallFacts:
    """What a rule can see of a call: which rule names cover it and what it touches."""

    tool: str
    names: tuple[str, ...]  # rule names that cover this tool for deny/ask
    allow_names: tuple[str, ...]  # rule names whose allow rules cover it
    paths: tuple[Target, ...] = ()  # every path it reads or changes (deny/ask look at all)
    allow_paths: tuple[Target, ...] = ()  # the paths an allow rule must cover
    search_root: bool = False  # the paths are folders searched recursively (Glob, Grep, LS)
    command: str | None = None
    url: str | None = None
    outside: bool = False  # touches a path outside the workspace
    allow_blocked: bool = False  # no allow rule may cover it (e.g. WebFetch with POST)
    also: tuple[Access, ...] = ()  # more (rule names, paths) that deny and ask rules check
    code: str | None = None  # the exact code a RunCell / KernelInspect call runs, when known
    tags: frozenset[str] | None = None  # the tags (tag_key) of the cell it runs or changes, when known


@functools.lru_cache(maxsize=1024)
def parse_rule(text: str) -> Rule:
    """`Tool`, `Tool(specifier)`; `Tool()` and `Tool(*)` mean the whole tool. Raises ValueError."""
    match = _RULE.match(text.strip())
    if not match:
        raise ValueError(f"Not a permission rule: {text!r} (expected Tool or Tool(specifier)).")
    tool, specifier = match.group(1), match.group(2)
    if specifier is not None and specifier.strip() in ("", "*"):
        specifier = None
    if specifier is not None and tag_rule_key(specifier) == "":
        raise ValueError(f"The rule {text.strip()!r} names no tag (write it as Tool(tag:name)).")
    return Rule(text.strip(), tool, specifier)


def rule_matches(rule: Rule, call: CallFacts, kind: RuleKind, anchors: Anchors) -> bool:
    """Whether `rule`, used as a `kind` rule, covers `call`."""
    if kind != "allow" and any(_access_matches(rule, access, kind, anchors) for access in call.also):
        return True
    if not _name_matches(rule.tool, call, kind):
        return False
    if kind == "allow" and call.allow_blocked:
        return False
    if rule.specifier is None:
        # A bare allow rule covers the tool inside the workspace only; outside needs a path rule.
        return kind != "allow" or not call.outside
    tag = tag_rule_key(rule.specifier)
    if tag is not None:
        return call.tags is not None and tag in call.tags
    if call.code is not None:
        return rule.specifier == call.code  # exact text: no wildcards, no prefix
    if call.command is not None:
        return bash_rule_matches(rule.specifier, call.command, kind)
    if call.url is not None:
        return domain_rule_matches(rule.specifier, call.url)
    if call.paths:
        return _path_rule_matches(rule.specifier, call, kind, anchors)
    return False


def _access_matches(rule: Rule, access: Access, kind: RuleKind, anchors: Anchors) -> bool:
    if rule.tool not in access.names:
        return False
    facts = CallFacts(rule.tool, access.names, (), access.paths)
    return rule.specifier is None or _path_rule_matches(rule.specifier, facts, kind, anchors)


def _name_matches(rule_tool: str, call: CallFacts, kind: RuleKind) -> bool:
    if rule_tool.startswith("mcp__"):
        if rule_tool.endswith("__*"):
            return call.tool.startswith(rule_tool[:-1])
        return call.tool == rule_tool or (
            rule_tool.count("__") == 1 and call.tool.startswith(rule_tool + "__")
        )
    return rule_tool in (call.allow_names if kind == "allow" else call.names)


# --- Bash -----------------------------------------------------------------------------------


def bash_rule_matches(spec: str, command: str, kind: RuleKind) -> bool:
    """Allow: the rule covers every command the line can run, and the analysis is certain.

    Deny/ask: the rule covers any command; when the analysis is uncertain, also any run of words
    anywhere in the line (`$X; rm y` hits `Bash(rm:*)` even though the parse is not trusted).
    """
    analysis = analyse(command)
    if kind == "allow":
        if not analysis.certain:
            return False
        return _same_commands(spec, analysis) or (
            bool(analysis.commands) and all(_covers(spec, part, strict=True) for part in analysis.commands)
        )
    if _same_commands(spec, analysis) or any(
        _covers(spec, variant, strict=False) for part in analysis.commands for variant in _variants(part)
    ):
        return True
    if any(_may_cover(spec, part) for part in analysis.commands if part.shapes):
        return True
    return not analysis.certain and (
        _covers_loose(spec, analysis.loose) or any(_may_cover_within(spec, c) for c in analysis.rough)
    )


def subcommand_allowed(spec: str, part: Subcommand) -> bool:
    """Whether the allow rule `Bash(spec)` covers this one subcommand."""
    return _covers(spec, part, strict=True)


def _same_commands(spec: str, analysis: ShellAnalysis) -> bool:
    """An exact rule naming the same command line (`Bash(git status && git diff)`), spacing aside."""
    if spec.endswith(":*") or "*" in spec:
        return False
    wanted = analyse(spec)
    if not wanted.certain or not analysis.certain or not wanted.commands:
        return False
    return [_full_words(p) for p in wanted.commands] == [_full_words(p) for p in analysis.commands] and [
        p.writes_file for p in wanted.commands
    ] == [p.writes_file for p in analysis.commands]


def _may_cover(spec: str, part: Subcommand) -> bool:
    """Deny/ask: whether some value of the words that expand at run time makes the rule cover the
    command (`rm -r$(x)f` may be `rm -rf`; `rm $x` too). A command name known in no part (`$x`,
    `$(x)`) is left to the scan of the line's words: as a wildcard it would match every rule."""
    head = part.shapes[0]
    if all(piece is None for piece in head):
        return False
    lines = {_tokens((head, *part.shapes[1:])), _tokens((_without_path(head), *part.shapes[1:]))}
    return any(overlaps(line, rule) for line in lines for rule in _rule_tokens(spec))


def _may_cover_within(spec: str, command: Shape) -> bool:
    """Deny/ask on a line that cannot be parsed: whether the rule may cover the words from some
    word of a rough command on (`c1 -$(echo r)f` may be `c1 -rf`). As in `_may_cover`, a run that
    starts with a word known in no part is left out."""
    tokens = _tokens((command,))
    rules = [(*rule, None) for rule in _rule_tokens(spec) if rule]
    return any(
        overlaps(tokens[start:], rule)
        for start in _word_starts(tokens)
        for rule in rules
        if rule[0] is None or tokens[start] in (rule[0], None)
    )


def _word_starts(tokens: Tokens) -> list[int]:
    """Where the words (and the names after a `/`) start, leaving out words known in no part."""
    starts: list[int] = []
    for start, token in enumerate(tokens):
        if token == " " or (start and tokens[start - 1] not in (" ", "/")):
            continue
        end = next((k for k in range(start, len(tokens)) if tokens[k] == " "), len(tokens))
        if any(t is not None for t in tokens[start:end]):
            starts.append(start)
    return starts


def _without_path(head: Shape) -> Shape:
    """The command name without the folders before its last known `/` (`/bin/r$(x)` -> `r$(x)`)."""
    for index in range(len(head) - 1, -1, -1):
        piece = head[index]
        if piece is not None and "/" in piece:
            return joined((piece.rsplit("/", 1)[1], *head[index + 1 :]))
    return head


def _tokens(shapes: Sequence[Shape]) -> Tokens:
    """Words joined by single spaces, one character a token and None for each unknown piece."""
    tokens: list[str | None] = []
    for index, shape in enumerate(shapes):
        if index:
            tokens.append(" ")
        for piece in shape:
            tokens.extend([None] if piece is None else piece)
    return tuple(tokens)


@functools.lru_cache(maxsize=512)
def _rule_tokens(spec: str) -> tuple[Tokens, ...]:
    """The values a rule covers, as tokens: `git push:*` is `git push` or `git push *`."""
    if spec.endswith(":*"):
        words = _words(spec[:-2])
        head = " ".join(words) if words is not None else _collapse(spec[:-2])
        return tuple(head), (*head, " ", None)
    if "*" in spec:
        collapsed = _collapse(spec)
        wild = tuple(None if char == "*" else char for char in collapsed)
        return (wild, wild[:-2]) if collapsed.endswith(" *") else (wild,)
    words = _words(spec)
    return (tuple(" ".join(words) if words is not None else _collapse(spec)),)


def _covers_loose(spec: str, words: tuple[str, ...]) -> bool:
    """Whether the rule's leading words appear as a run anywhere in `words` (lines that cannot be
    analysed). Wildcards count from their literal start: `Bash(git * main)` looks for `git`."""
    head, open_end = _loose_pattern(spec)
    if not head:
        return bool(words)
    size = len(head)
    for start in range(len(words) - size + 1):
        window = words[start : start + size]
        for first in {window[0], window[0].rsplit("/", 1)[-1]}:
            candidate = (first, *window[1:])
            last_ok = candidate[-1].startswith(head[-1]) if open_end else candidate[-1] == head[-1]
            if last_ok and candidate[:-1] == head[:-1]:
                return True
    return False


@functools.lru_cache(maxsize=512)
def _loose_pattern(spec: str) -> tuple[tuple[str, ...], bool]:
    """The literal words a rule starts with, and whether the last may continue (`npm*`)."""
    body = spec[:-2] if spec.endswith(":*") else spec
    if "*" in body:
        literal = fold_ascii(body.split("*", 1)[0])
        return tuple(literal.split()), not literal.endswith(" ") and bool(literal.strip())
    return _words(body) or tuple(body.split()), False


def _full_words(part: Subcommand) -> tuple[str, ...] | None:
    """The words of a subcommand, `VAR=value` prefixes included."""
    if part.words:
        return (*part.prefix, *part.words)
    return _words(part.text)


def _variants(part: Subcommand) -> list[Subcommand]:
    """The subcommand, and the same without `VAR=value` prefixes or a path on the command (deny/ask)."""
    words = list(_full_words(part) or part.text.split())
    bare = words
    while bare and _ENV_ASSIGNMENT.match(bare[0]):
        bare = bare[1:]
    if bare and "/" in bare[0]:
        bare = [bare[0].rsplit("/", 1)[1], *bare[1:]]
    if bare is words or not bare:
        return [part]
    return [part, Subcommand(" ".join(bare), part.writes_file, tuple(bare))]


def _covers(spec: str, part: Subcommand, *, strict: bool) -> bool:
    """Prefix (`git diff:*`), wildcard (`npm *`) or exact (`npm test`) match of one subcommand.

    When `strict` (allow rules), prefix and wildcard rules never cover a command that redirects
    output into a file: `echo:*` must not allow `echo x > ~/.bashrc`.
    """
    words = _full_words(part)
    if spec.endswith(":*"):
        if strict and part.writes_file:
            return False
        return _prefix_matches(spec[:-2], part.text, words)
    if "*" in spec:
        if strict and part.writes_file:
            return False
        pattern = _wildcard(spec)
        joined = " ".join(words) if words is not None else None
        return pattern.fullmatch(_collapse(part.text)) is not None or (
            joined is not None and pattern.fullmatch(joined) is not None
        )
    wanted = _words(spec)
    return wanted is not None and wanted == words and not (strict and part.writes_file)


def _prefix_matches(prefix: str, text: str, words: tuple[str, ...] | None) -> bool:
    wanted = _words(prefix)
    if wanted is None or words is None:
        collapsed, head = _collapse(text), _collapse(prefix)
        return collapsed == head or collapsed.startswith(head + " ")
    return bool(wanted) and words[: len(wanted)] == wanted


@functools.lru_cache(maxsize=512)
def _wildcard(spec: str) -> re.Pattern[str]:
    """`*` matches anything (spaces and slashes too); a trailing ` *` also matches nothing at all."""
    collapsed = _collapse(spec)
    tail = ""
    if collapsed.endswith(" *"):
        collapsed, tail = collapsed[:-2], "(?: .*)?"
    body = ".*".join(re.escape(piece) for piece in collapsed.split("*"))
    return re.compile(body + tail, re.DOTALL)


@functools.lru_cache(maxsize=1024)
def _words(text: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(fold_ascii(text), comments=True))
    except ValueError:
        return None


def _collapse(text: str) -> str:
    """Single spaces, non-ASCII spelled as the shell analysis spells it (`fold_ascii`)."""
    return " ".join(fold_ascii(text).split())


# --- WebFetch -------------------------------------------------------------------------------


def url_host(url: str) -> str:
    """The lower-case host name of `url` (a missing scheme is taken as https)."""
    parts = urlsplit(url if "://" in url else "https://" + url)
    return (parts.hostname or "").rstrip(".").lower()


def domain_rule_matches(spec: str, url: str) -> bool:
    """`domain:example.com` is that exact host; `domain:*.example.com` its subdomains."""
    if not spec.startswith("domain:"):
        return False
    domain = spec[len("domain:") :].strip().rstrip(".").lower()
    host = url_host(url)
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return bool(host) and host == domain


# --- paths ----------------------------------------------------------------------------------


def anchor(spec: str, anchors: Anchors, *, real: bool) -> tuple[Path, str]:
    """The base folder (as written, or symlinks resolved) and the gitignore-style pattern below it."""
    workspace = anchors.real_workspace if real else anchors.workspace
    if spec.startswith("//"):
        return Path("/"), spec[2:] or "**"
    if spec == "~" or spec.startswith("~/"):
        return (anchors.real_home if real else anchors.home), spec[2:] or "**"
    if spec.startswith("/"):
        return workspace, spec[1:] or "**"
    if spec.startswith("./"):
        return workspace, spec[2:] or "**"
    # gitignore: a pattern without a slash (except a trailing one) matches at any depth
    return workspace, spec if "/" in spec.rstrip("/") else "**/" + spec


def _path_rule_matches(spec: str, call: CallFacts, kind: RuleKind, anchors: Anchors) -> bool:
    real_base, pattern = anchor(spec, anchors, real=True)
    if kind == "allow":
        targets = call.allow_paths
        return bool(targets) and all(
            _under_pattern(t.real, real_base, pattern, call.search_root) for t in targets
        )
    base = anchor(spec, anchors, real=False)[0]
    return any(_target_hit(t, (base, real_base), pattern, call.search_root) for t in call.paths)


def _target_hit(target: Target, bases: tuple[Path, Path], pattern: str, search_root: bool) -> bool:
    """Deny/ask: the path as written or resolved, or (for a folder acted on as a whole) anything
    below it, matches. Case-insensitively: on such file systems `Secrets/` is `secrets/`."""
    pairs = [(target.path, bases[0])]
    if (target.real, bases[1]) != pairs[0]:
        pairs.append((target.real, bases[1]))
    folder = search_root or target.below is not None
    if any(_under_pattern(p, b, pattern, folder, ignore_case=True) for p, b in pairs):
        return True
    return target.below is not None and any(_hit_below(target.below, p, b, pattern) for p, b in pairs)


def _hit_below(below: FolderWalk, path: Path, base: Path, pattern: str) -> bool:
    rel = relative_inside(path, base, ignore_case=True)
    if rel is None or not _could_match_below(pattern, rel):
        return False
    names = below.names
    if names is None:
        return True  # too much to check: fail closed
    regex, prefix = _stem_regex(pattern), f"{rel}/" if rel else ""
    parts = rel.split("/") if rel else []
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts))]  # the folder and those above it
    if names and any(regex.match(folder) for folder in folders):
        return True
    if pattern.endswith("/"):  # `dir/` names folders (empty ones too), never a file
        return any(regex.match(f"{prefix}{name}/") for name in below.folders)
    return any(regex.match(prefix + name) for name in names)


@functools.lru_cache(maxsize=256)
def _stem_regex(pattern: str) -> re.Pattern[str]:
    """The pattern alone as one regex, case-insensitive. Enough for folder listings: they hold every
    folder too, so whatever `stem/**` covers below a listed folder, `stem` matches that folder."""
    positive, _ = glob.translate(pattern.rstrip("/") or "**", flags=_GLOB_FLAGS | glob.IGNORECASE)
    return re.compile("|".join(positive))


def _could_match_below(pattern: str, rel: str) -> bool:
    """False when the pattern's literal leading folders leave `rel` (so nothing below it matches)."""
    head: list[str] = []
    for segment in filter(None, pattern.split("/")):
        if _PATTERN_MAGIC & set(segment):
            break
        head.append(segment.casefold())
    return all(a == b for a, b in zip(head, rel.split("/") if rel else [], strict=False))


def _under_pattern(
    path: Path, base: Path, pattern: str, search_root: bool, *, ignore_case: bool = False
) -> bool:
    rel = relative_inside(path, base, ignore_case=ignore_case)
    if rel is None:
        return False
    candidates = [rel] if rel else []
    if search_root:
        candidates.append(f"{rel}/{_PROBE}" if rel else _PROBE)
    matcher = _compiled(pattern, ignore_case)
    return any(matcher.match(c) for c in candidates)


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str, ignore_case: bool = False) -> glob.WcMatcher[str]:
    """The pattern, plus everything below what it names (gitignore: an ignored folder hides its files)."""
    stem = pattern.rstrip("/")
    patterns = [stem + "/**"] if pattern.endswith("/") else [stem, stem + "/**"]
    return glob.compile(patterns, flags=_GLOB_FLAGS | (glob.IGNORECASE if ignore_case else 0))


def relative_inside(path: Path, folder: Path, *, ignore_case: bool = False) -> str | None:
    """`path` relative to `folder` in POSIX form ("" for the folder itself); None when outside it."""
    text, root = path.as_posix(), folder.as_posix()
    if ignore_case:
        text, root = text.casefold(), root.casefold()
    if text == root:
        return ""
    prefix = root if root.endswith("/") else root + "/"
    return text[len(prefix) :] if text.startswith(prefix) else None
