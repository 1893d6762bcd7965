"""Omission placeholders: comment lines such as `// ... rest of code ...` that a lazy model writes in
place of code it did not want to repeat. Write and Edit refuse new ones that would replace real code."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from goat_jupyter.errors import InvalidInputError

PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".tex", ".log", ".csv"})
_COMMENT_LINE = re.compile(r"^\s*(?:#+|//+|/\*+|<!--|--|\(|\[)\s*(?P<body>.*?)\s*(?:\*+/|-->|\)|\])?\s*$")
_ELLIPSIS = re.compile(r"\.\.\.|\u2026")
_KEYWORDS = re.compile(
    r"\b(rest|remaining|existing|unchanged|same|previous|other|omitted|original|code|methods?|functions?|"
    r"implementation|logic|etc)\b"
)
_PHRASES = re.compile(
    r"\b(rest of (the )?(code|file|class|functions?|methods?|implementation|content|component|module|logic)"
    r"|(existing|unchanged|previous|original|remaining|other) (code|methods|functions|implementation|content"
    r"|logic|imports|lines)( (here|goes here|remains?|unchanged))?"
    r"|(code|implementation|content|logic) (is )?(unchanged|remains|stays)"
    r"|same as before|omitted for brevity|keep(ing)? (the )?(rest|existing))\b"
)
_STRING_FENCES = ('"""', "'''", "`")
MAX_PHRASE_WORDS = 6


def placeholder_text(line: str) -> str | None:
    """The placeholder a line consists of (lower-cased comment text), or None for any other line."""
    match = _COMMENT_LINE.match(line)
    if match is None or not line.strip():
        return None
    body = match.group("body").lower().strip(" .\u2026:-*")
    raw = match.group("body").lower()
    if _ELLIPSIS.search(raw) and (not body or _KEYWORDS.search(body)):
        return raw.strip()
    if body and len(body.split()) <= MAX_PHRASE_WORDS and _PHRASES.fullmatch(body.strip()):
        return raw.strip()
    return None


def placeholders(text: str) -> list[tuple[int, str]]:
    """(line number, placeholder) for each placeholder line outside multi-line string literals."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if fence is None and (hit := placeholder_text(line)) is not None:
            found.append((number, hit))
        fence = _fence_after(line, fence)
    return found


def _fence_after(line: str, fence: str | None) -> str | None:
    """Which multi-line string (triple quotes, template literal) is open after `line`."""
    rest = line.replace("\\`", "").replace('\\"', "").replace("\\'", "")
    while True:
        if fence is not None:
            at = rest.find(fence)
            if at < 0:
                return fence
            rest, fence = rest[at + len(fence) :], None
            continue
        opened = [(rest.find(f), f) for f in _STRING_FENCES if rest.find(f) >= 0]
        if not opened:
            return None
        at, fence = min(opened)
        rest = rest[at + len(fence) :]


def refuse_placeholders(path: Path, new: str, replaced: str, field: str) -> None:
    """InvalidInputError when `new` holds placeholders that `replaced` (the code it replaces) did not."""
    if path.suffix.lower() in PROSE_SUFFIXES or not replaced.strip():
        return
    added = _new_ones(placeholders(new), Counter(text for _, text in placeholders(replaced)))
    if added is None:
        return
    number, text = added
    raise InvalidInputError(
        f"{field} contains an omission placeholder at its line {number} ({text!r}) where existing code of "
        f"{path} would be replaced, so the real code would be lost; nothing was changed. Give the complete "
        "content instead of abbreviating it (with Edit, leave code you keep out of old_string)."
    )


def _new_ones(found: list[tuple[int, str]], before: Counter[str]) -> tuple[int, str] | None:
    """The first placeholder of `found` that the replaced text did not already hold."""
    for number, text in found:
        if before[text] > 0:
            before[text] -= 1
        else:
            return number, text
    return None
