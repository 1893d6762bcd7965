"""Split a shell command into the simple commands a permission rule must cover (no execution)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

_SEPARATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n")
_STARTS = frozenset("&|;\n")
_SAFE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr")


@dataclass(frozen=True)
class Subcommand:
    """One simple command of a compound command line; `writes_file` marks a `>` redirect to a file."""

    text: str
    writes_file: bool = False


@dataclass
class _Scan:
    """Scanner state: the command text, the position, and what has been found so far."""

    source: str
    pos: int = 0
    nested: list[Subcommand] | None = None

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def startswith(self, text: str) -> bool:
        return self.source.startswith(text, self.pos)


@functools.lru_cache(maxsize=256)
def split_command(command: str) -> tuple[Subcommand, ...]:
    """Every simple command in `command`, including those inside `$(...)`, backticks and `<(...)`.

    Operators `&&`, `||`, `;`, `|`, `|&`, `&` and newlines separate commands; quotes, escapes and
    comments are respected; grouping brackets around a command are dropped.
    """
    scan = _Scan(command, nested=[])
    top = _split_until(scan, closer="")
    return (*top, *(scan.nested or []))


def _split_until(scan: _Scan, closer: str) -> list[Subcommand]:
    """Split from the scan position up to `closer` (")" or "`"; "" = end of text)."""
    parts: list[Subcommand] = []
    start = scan.pos
    writes = False
    while scan.pos < len(scan.source):
        if closer and scan.startswith(closer):
            break
        char = scan.peek()
        separator = next((s for s in _SEPARATORS if scan.startswith(s)), None) if char in _STARTS else None
        if separator and not _is_redirect_ampersand(scan, separator):
            _keep(parts, scan.source[start : scan.pos], writes)
            scan.pos += len(separator)
            start, writes = scan.pos, False
            continue
        writes = _step(scan) or writes
    _keep(parts, scan.source[start : scan.pos], writes)
    return parts


def _is_redirect_ampersand(scan: _Scan, separator: str) -> bool:
    """`&>file`, `>&2` and `2>&1` use `&` without separating commands."""
    if separator != "&":
        return False
    return scan.peek(1) == ">" or (scan.pos > 0 and scan.source[scan.pos - 1] in "<>")


def _step(scan: _Scan) -> bool:
    """Consume one lexical unit; True when it was an output redirect to a real file."""
    char = scan.peek()
    if char == "\\":
        scan.pos += 2
    elif char == "'":
        end = scan.source.find("'", scan.pos + 1)
        scan.pos = len(scan.source) if end < 0 else end + 1
    elif char == '"':
        _skip_double_quoted(scan)
    elif scan.startswith("$(") or scan.startswith("<(") or scan.startswith(">("):
        _nested(scan, skip=2, closer=")")
    elif char == "`":
        _nested(scan, skip=1, closer="`")
    elif char == "#" and (scan.pos == 0 or scan.source[scan.pos - 1] in " \t\n;&|("):
        end = scan.source.find("\n", scan.pos)
        scan.pos = len(scan.source) if end < 0 else end
    elif char == ">":
        return _redirect(scan)
    else:
        scan.pos += 1
    return False


def _skip_double_quoted(scan: _Scan) -> None:
    scan.pos += 1
    while scan.pos < len(scan.source) and scan.peek() != '"':
        if scan.peek() == "\\":
            scan.pos += 2
        elif scan.startswith("$("):
            _nested(scan, skip=2, closer=")")
        elif scan.peek() == "`":
            _nested(scan, skip=1, closer="`")
        else:
            scan.pos += 1
    scan.pos += 1


def _nested(scan: _Scan, *, skip: int, closer: str) -> None:
    """A command substitution: its commands count as subcommands of the whole line."""
    scan.pos += skip
    inner = _split_until(scan, closer)
    scan.pos += len(closer)
    if scan.nested is not None:
        scan.nested.extend(inner)


def _redirect(scan: _Scan) -> bool:
    """`>`, `>>` or `>|` followed by a target; fd duplications and /dev/null do not write files."""
    scan.pos += 1
    if scan.peek() in (">", "|"):
        scan.pos += 1
    if scan.peek() == "&":
        return False
    while scan.peek() in (" ", "\t"):
        scan.pos += 1
    start = scan.pos
    while scan.pos < len(scan.source) and scan.peek() not in " \t\n;&|<>()":
        scan.pos += 1
    return scan.source[start : scan.pos].strip("'\"") not in _SAFE_TARGETS


def _keep(parts: list[Subcommand], raw: str, writes: bool) -> None:
    """Record one command, without the grouping brackets of `( ... )` / `{ ...; }` around it."""
    text = raw.strip()
    while text and text[0] in "({" and not text.startswith("(("):
        text = text[1:].strip()
    while text and text[-1] in ")}" and _unbalanced(text):
        text = text[:-1].strip()
    if text:
        parts.append(Subcommand(text, writes))


def _unbalanced(text: str) -> bool:
    closer = text[-1]
    opener = "(" if closer == ")" else "{"
    return text.count(closer) > text.count(opener)
