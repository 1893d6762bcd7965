"""Model, recording and notebook text made safe to show as Markdown in a trusted JupyterLab output.

JupyterLab renders a live output's Markdown with marked and does not sanitise it, so every rule here
holds whatever marked makes of the text: a real CommonMark parser (markdown-it) only says where code
is, and only code that every reading agrees on keeps its `<` raw. Outside it:
- `<` is `&lt;` and `&` is `&amp;`: no raw HTML, no autolink, no entity that spells `javascript:`;
- a colon after a scheme other than http, https and mailto gets a zero-width space, so no link or
  image points at `javascript:`, `data:` or `vbscript:` whatever the spelling (tabs, case, escapes);
- `![` loses its image: a picture would load a URL (and tell its server what the model chose) with no click;
- `$` is `\\$`, and the whole text sits in a `mathjax_ignore` block: dollars stay dollars, no MathJax
  (whose `\\href` and `\\style` could make a link that covers the page);
- `goat-cite` gets a zero-width space: only goat's own citation marks link to `#goat-cite-...`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from goat_jupyter.ui.safe.controls import strip_controls

NO_MATH_CLASS = "mathjax_ignore"  # MathJax skips elements of this class (JupyterLab's default options)
NO_MATH_DIV = f'<div class="{NO_MATH_CLASS}">'
NO_MATH_OPEN = NO_MATH_DIV + "\n\n"  # an HTML block before the Markdown; the browser closes it at the end
ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
ZWSP = "\u200b"
_SPANS = "goat_code_spans"
# Inline runs where marked finds other code spans than CommonMark: backtick runs, an escaped backtick,
# `~` beside one (marked's text rule eats `~` and backticks together), a bare URL (its GFM autolink eats
# backticks up to the next `<`).
_UNSURE_SPANS = re.compile(r"``|\\`|~`|`~|://|www\.", re.IGNORECASE)
_FENCE_LIKE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})")
_OPENING = re.compile(
    r"^(?P<prefix>[ ]*(?:(?:[-+*]|\d{1,9}[.)])[ ]+)*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$"
)
# A scheme-like word before a colon that starts a URL: not inside a word, path or host (`/x:`, `a@b:`).
_OUTSIDE = re.compile(
    r"(?P<escaped>\\[\\$])|(?P<amp>&)|(?P<lt><)|(?P<image>!(?=\\?\[))|(?P<dollar>\$)"
    r"|(?P<cite>(?i:goat)(?=\\?-(?i:cite)))"  # before `scheme`: `goat-cite-7:` loses its anchor too
    r"|(?<![A-Za-z0-9+.\-/@])(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)(?P<colon>\\?:)(?=\S)"
)

# What goat may replace with its own Markdown (a citation and what the model claimed of it): one
# line, no code; a run any rule here would change is never replaced (the rule wins).
_MARKABLE = re.compile(r"[^\n`]+")
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")

Span = tuple[int, int]
Mark = tuple[int, int, str]  # text[start:end] is shown as goat's own Markdown instead


def clean_newlines(text: str) -> str:
    """The text every function here reads: controls gone, line breaks as `\n` (positions are in it)."""
    return strip_controls(text.replace("\r\n", "\n").replace("\r", "\n"))


def safe_markdown(text: str) -> str:
    """`text` as Markdown that renders to no HTML tag, image, math or non-http link of its own."""
    return marked_markdown(text, ())[0]


def marked_markdown(text: str, marks: Sequence[Mark]) -> tuple[str, list[Mark]]:
    """safe_markdown, with goat's own Markdown in place of some plain runs outside code (positions in
    `clean_newlines(text)`), put in after the text around them is made safe as if they were not
    there; and the marks it put in (one over code, over a line break or over what a rule changes is not)."""
    text = clean_newlines(text)
    marks = [m for m in marks if _MARKABLE.fullmatch(text, m[0], m[1])]
    parts: list[str] = []
    applied: list[Mark] = []
    position = 0
    for start, end in [*code_spans(text), (len(text), len(text))]:
        inside = [(s - position, e - position, m) for s, e, m in marks if position <= s and e <= start]
        safe, used = _neutralise(text[position:start], inside)
        parts += [safe, text[start:end]]
        applied += [(s + position, e + position, m) for s, e, m in used]
        position = end
    return NO_MATH_OPEN + "".join(parts), applied


def escape_inline(text: str) -> str:
    """A short text of the model's shown literally inside goat's own Markdown: one line, every
    punctuation character escaped (no emphasis, link, code or autolink), no HTML, no entity."""
    flat = " ".join(clean_newlines(text).split())
    return _PUNCTUATION.sub(_escaped, flat)


def _escaped(match: re.Match[str]) -> str:
    char = match.group(0)
    return {"<": "&lt;", "&": "&amp;"}.get(char, "\\" + char)


def literal_spans(text: str) -> list[Span]:
    """Where any reader may see code in `clean_newlines(text)`: the certain code spans, every code
    block's lines, and the lines of a paragraph whose code spans are not certain."""
    env: dict[str, list[tuple[str, int, int]]] = {_SPANS: []}
    tokens = _parser().parse(text, env)
    lines = text.split("\n")
    starts = _line_starts(lines)
    spans = code_spans(text)
    for token in tokens:
        if token.map is None:
            continue
        whole = (starts[token.map[0]], starts[token.map[1] - 1] + len(lines[token.map[1] - 1]))
        if token.type in ("fence", "code_block"):
            spans.append(whole)
        elif token.type == "inline" and "`" in token.content:
            recorded = [span for span in env[_SPANS] if span[0] is token.content]
            if len(list(_inline_spans(token, recorded, lines, starts))) != len(recorded):
                spans.append(whole)
    return sorted(spans)


class StreamedMarkdown:
    """safe_markdown of a text that grows as the model streams: parsing a long answer costs tens of
    milliseconds, so while it streams it is redone at most once per `PAUSE_FACTOR` times its own cost."""

    PAUSE_FACTOR = 4  # at most a fifth of the kernel's time goes to parsing a streaming answer

    def __init__(self) -> None:
        self._text: str | None = None
        self._markdown = ""
        self._next_at = 0.0

    def render(self, text: str, *, final: bool) -> tuple[str, bool]:
        """The Markdown to show, and whether it is `text`'s own (False: an earlier text's, for now)."""
        if text == self._text:
            return self._markdown, True
        start = time.perf_counter()
        if not final and start < self._next_at:
            return self._markdown, False
        self._text, self._markdown = text, safe_markdown(text)
        self._next_at = start + (time.perf_counter() - start) * (1 + self.PAUSE_FACTOR)
        return self._markdown, True


def no_math(bundle: dict[str, str]) -> dict[str, str]:
    """goat's own HTML in a block MathJax skips: `$0.03 of $0.05` is money, never math."""
    html = bundle.get("text/html")
    if html is None or html.startswith(NO_MATH_DIV):
        return bundle
    return {**bundle, "text/html": f"{NO_MATH_DIV}{html}</div>"}


def _neutralise(text: str, marks: Sequence[Mark] = ()) -> tuple[str, list[Mark]]:
    """Every rule applied to a run outside code, and the `marks` spliced in (in place of what they cover)."""
    if not marks:
        return _OUTSIDE.sub(_replacement, text), []
    edits = [(m.start(), m.end(), _replacement(m)) for m in _OUTSIDE.finditer(text)]
    used = [mark for mark in marks if not any(_straddles(edit, mark) for edit in edits)]
    edits = [edit for edit in edits if not any(m[0] <= edit[0] and edit[1] <= m[1] for m in used)]
    parts: list[str] = []
    applied: list[Mark] = []
    position = 0
    for start, end, replacement in sorted(edits + used):
        if start < position:
            continue  # two marks over the same run: the first one stands
        parts += [text[position:start], replacement]
        applied += [(start, end, replacement)] if (start, end, replacement) in used else []
        position = end
    parts.append(text[position:])
    return "".join(parts), applied


def _straddles(edit: Mark, mark: Mark) -> bool:
    """An edit half in a mark: the mark goes (one wholly inside it goes with the text it replaces)."""
    overlaps = edit[0] < mark[1] and mark[0] < edit[1]
    return overlaps and not (mark[0] <= edit[0] and edit[1] <= mark[1])


def _replacement(match: re.Match[str]) -> str:
    if match.group("escaped"):
        return match.group(0)  # `\\` and `\$` already read as written
    if match.group("amp"):
        return "&amp;"
    if match.group("lt"):
        return "&lt;"
    if match.group("image"):
        return "\\!"
    if match.group("dollar"):
        return "\\$"
    if match.group("cite"):
        return match.group("cite") + ZWSP  # only goat's own marks link to `#goat-cite-...` (cited.py)
    scheme = match.group("scheme")
    if scheme.lower() in ALLOWED_SCHEMES:
        return match.group(0)
    return scheme + ZWSP + match.group("colon")


def code_spans(text: str) -> list[Span]:
    """Where `text` holds code that marked and CommonMark both show as code: character ranges, in order."""
    env: dict[str, list[tuple[str, int, int]]] = {_SPANS: []}
    tokens = _parser().parse(text, env)
    lines = text.split("\n")
    starts = _line_starts(lines)
    spans: list[Span] = []
    for token in tokens:
        if token.type == "fence":
            spans += _fence_span(token, lines, starts)
        elif token.type == "inline":
            spans += _inline_spans(token, env[_SPANS], lines, starts)
    return sorted(spans)


@cache
def _parser() -> MarkdownIt:
    """CommonMark plus GFM tables and strikethrough, as marked reads goat's output; code spans recorded."""
    # Without raw HTML: goat escapes every `<` outside code, so marked reads no HTML block either, and
    # an HTML block (which swallows the lines up to a blank one) must not shape what counts as code.
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    original = next(rule.fn for rule in md.inline.ruler.__rules__ if rule.name == "backticks")
    md.inline.ruler.at("backticks", _recording(original))
    md.core.ruler.at("inline", _inline_with_backticks)
    return md


def _inline_with_backticks(state: StateCore) -> None:
    """Inline parsing only where a code span can be: it is all goat reads of it (and most of the time)."""
    for token in state.tokens:
        if token.type == "inline" and "`" in token.content:
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _recording(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """The backticks rule, noting each code span it makes as (the inline source, start, end)."""

    def backticks(state: StateInline, silent: bool) -> bool:
        start = state.pos
        found = rule(state, silent)
        if found and not silent and state.tokens and state.tokens[-1].type == "code_inline":
            state.env[_SPANS].append((state.src, start, state.pos))
        return found

    return backticks


def _line_starts(lines: list[str]) -> list[int]:
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return starts


def _fence_span(token: Token, lines: list[str], starts: list[int]) -> list[Span]:
    """The fenced block's content lines, when nothing about the block is read two ways."""
    if token.map is None:
        return []
    first, end = token.map
    opening = _OPENING.match(lines[first])
    if opening is None:
        return []  # a tab or a blockquote's `>` before the fence: read differently by different parsers
    closed = end - 1 > first and _is_closing(lines[end - 1], opening.group("fence"))
    content = lines[first + 1 : end - 1 if closed else end]
    if not closed and token.level > 0:
        return []
    if any(_FENCE_LIKE.match(line) for line in content):
        return []  # marked also closes a fence on ```~ and similar: no line may look like a fence
    indent = len(opening.group("prefix"))
    if token.level > 0 and any(line.strip() and not line.startswith(" " * indent) for line in content):
        return []
    if not content:
        return []
    start = starts[first + 1]
    return [(start, start + len("\n".join(content)))]


def _is_closing(line: str, fence: str) -> bool:
    stripped = line.strip(" ")
    return set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def _inline_spans(
    token: Token, recorded: list[tuple[str, int, int]], lines: list[str], starts: list[int]
) -> Iterator[Span]:
    """The code spans markdown-it found in this inline run, placed back in the whole text."""
    if token.map is None or _UNSURE_SPANS.search(token.content):
        return
    mapping = _locate(token.content, lines[token.map[0] : token.map[1]], starts[token.map[0] :])
    if mapping is None:
        return
    for source, start, end in recorded:
        if source is not token.content or "\n" in source[start:end]:
            continue  # a code span over a line break: marked may start a block on the next line
        first = _place(mapping, start)
        last = _place(mapping, end - 1)
        if first is not None and last is not None and last - first == end - 1 - start:
            yield (first, last + 1)


Mapping = list[tuple[int, int, int]]  # (offset in the inline content, offset in the text, length)


def _locate(content: str, source_lines: list[str], starts: list[int]) -> Mapping | None:
    """Where each line of an inline run lies in the text; None when that is not certain."""
    rows = content.split("\n")
    if len(rows) != len(source_lines):
        return None
    mapping: Mapping = []
    offset = 0
    for row, line, start in zip(rows, source_lines, starts, strict=False):
        column = _column(row, line, single=len(rows) == 1)
        if column is None:
            return None
        mapping.append((offset, start + column, len(row)))
        offset += len(row) + 1
    return mapping


def _column(row: str, line: str, *, single: bool) -> int | None:
    """Where `row` sits in its source line: its end (a paragraph's lines), else its only occurrence."""
    for candidate in (line, line.rstrip()):
        if candidate.endswith(row):
            return len(candidate) - len(row)
    if single and line.count(row) == 1:
        return line.index(row)
    return None


def _place(mapping: Mapping, offset: int) -> int | None:
    for inner, outer, length in mapping:
        if inner <= offset < inner + length:
            return outer + offset - inner
    return None
