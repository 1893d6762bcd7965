"""Bash syntax through tree-sitter-bash: the parse tree, and what a word means once quotes are removed."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

_LANGUAGE = Language(tree_sitter_bash.language())
_LOCAL = threading.local()  # a tree-sitter Parser must not be shared between threads

_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_UNQUOTED_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Inside double quotes, an unescaped `$name`, `${`, `$(` or backtick expands (the parser should have
# made a node of it; if it did not, the value is not literal).
_DOUBLE_QUOTED_EXPANSION = re.compile(r"(?<!\\)(?:\\\\)*(?:\$[A-Za-z0-9_{(@*#?$!-]|`)")
_PATTERN_CHARS = frozenset("*?[{")
_LOOSE_SPLIT = re.compile(r"[\s;&|()<>`{}=,:\[\]$]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_CONTINUATION = re.compile(rb"(\\+)\n")
_ANSI_C_STRING = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_QUOTING = re.compile(r"[\"'\\]")
_ROUGH_SEPARATOR = re.compile(r"[;&|()<>{}`\n]+")
_UNKNOWN = "\ue000"  # stands for an expansion (fold_ascii leaves no other non-ASCII character)
_BACKQUOTE_ESCAPE = re.compile(r"\\([$`\\])")
_BACKQUOTE_ESCAPE_IN_STRING = re.compile(r'\\([$`\\"])')
_BARE_BACKQUOTE = re.compile(r"(?<!\\)(?:\\\\)*`")
# The name and operator of a parameter expansion (`${x:-`, `${x/a/`, `$x`): what is left of the word
# once they are cut is the text bash may use instead (a default, an alternative, a replacement).
_EXPANSION_HEAD = re.compile(
    r"\$\{[#!]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?:\[[^\]]*\])?"
    r"(?::?[-=+?]|//?|/[#%]|##?|%%?|\^\^?|,,?|@)?|\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])"
)


# A word's value as pieces: known text, and None for text only known at run time (`c$(x)1` ->
# ("c", None, "1")). Rules match a deny against every value the pieces allow (permissions/rules.py).
Shape = tuple[str | None, ...]
_EMPTY_SUBSTITUTION = re.compile(r"(\$?)`\s*`|\$\(\s*\)", re.ASCII)
# The innermost substitutions and expansions of a line, for reading it as if they gave nothing.
_INNERMOST_EXPANSION = re.compile(
    r"`[^`]*`|\$\([^()]*\)|\$\{[^{}]*\}|\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])"
)


@dataclass(frozen=True)
class Word:
    """One shell word: its value with quotes removed, or its source text when it expands at run time."""

    text: str
    literal: bool = True
    pattern: bool = False  # an unquoted glob or brace expansion: it may become other words
    shape: Shape = ()  # of a word that expands: its known pieces (empty: nothing is known)

    def pieces(self) -> Shape:
        """The value as known and unknown pieces (a literal word, or one without a shape such as
        the wrappers' stand-ins for standard input, is its text)."""
        return self.shape or (self.text,)


def fold_ascii(text: str) -> str:
    """`text` with every non-ASCII character spelled as ASCII letters (`é` -> `XU` + hex + `X`).

    tree-sitter-bash 0.25.1 crashes (a segmentation fault, not an exception) on some random non-ASCII
    input, about once in 50,000 lines; on ASCII it did not in 240,000. Bash reads non-ASCII characters
    as ordinary word characters, and so does the grammar for ASCII letters, so the structure is the
    same. Rules are folded the same way before they are compared (permissions_rules).
    """
    if text.isascii():
        return text
    return _NON_ASCII.sub(lambda m: f"XU{ord(m.group(0)):x}X", text)


def parse(source: str) -> Node:
    """The root node of `source` parsed as bash (never raises; errors are ERROR / missing nodes).

    Line continuations are joined first, as bash does: tree-sitter-bash takes `r\\<newline>m` for
    two words, bash for the one word `rm`.
    """
    data = encode(fold_ascii(source))
    root = _parser().parse(data).root_node
    if b"\\\n" not in data:
        return root
    return _parser().parse(_join_continuations(data, root)).root_node


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = Parser(_LANGUAGE)
        _LOCAL.parser = parser
    return parser


def _join_continuations(data: bytes, root: Node) -> bytes:
    """`data` without the unquoted backslash-newline pairs (kept in '...', comments, quoted here-docs)."""
    kept = _verbatim_spans(root)
    cut: list[int] = []
    for match in _CONTINUATION.finditer(data):
        position = match.end() - 2
        if len(match.group(1)) % 2 == 1 and not any(a <= position < b for a, b in kept):
            cut.append(position)
    pieces: list[bytes] = []
    last = 0
    for position in cut:
        pieces.append(data[last:position])
        last = position + 2
    pieces.append(data[last:])
    return b"".join(pieces)


def _verbatim_spans(root: Node) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    stack: list[tuple[Node, Node | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        if node.type in ("raw_string", "ansi_c_string", "comment") or quoted_heredoc(node, parent):
            spans.append((node.start_byte, node.end_byte))
        else:
            stack.extend((child, node) for child in node.children)
    return spans


def quoted_heredoc(node: Node, parent: Node | None) -> bool:
    """A here-document body whose delimiter is quoted (`<<'EOF'`): bash expands nothing in it.

    `parent` is passed in because tree-sitter's `Node.parent` walks down from the root every time.
    """
    if node.type != "heredoc_body" or parent is None:
        return False
    start = next((c for c in parent.children if c.type == "heredoc_start"), None)
    return start is None or bool(set(text_of(start)) & set("'\"\\"))


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def text_of(node: Node) -> str:
    # "replace": tree-sitter may cut an invalid sequence (a lone surrogate) in the middle
    return (node.text or b"").decode("utf-8", "replace")


def word_of(*nodes: Node) -> Word:
    """What `nodes` (a word, string, concatenation, expansion..., or several that touch and so
    make one word for bash) stand for."""
    pieces = joined([piece for node in nodes for piece in shape_of(node)])
    if None in pieces:
        return Word("".join(text_of(n) for n in nodes), literal=False, shape=pieces)
    return Word("".join(p or "" for p in pieces), pattern=any(_has_pattern(n) for n in nodes))


def literal(node: Node) -> str | None:
    """The value of a word without expansions (quotes and escapes removed); None when it expands.

    Parts that are provably empty count as nothing: `c$()1`, `c''1` and c, an empty pair of
    backquotes, 1 are all `c1`.
    """
    pieces = shape_of(node)
    return None if None in pieces else "".join(p or "" for p in pieces)


def shape_of(node: Node) -> Shape:
    """The value of `node` as known pieces and None for each part only known at run time."""
    kind, raw = node.type, text_of(node)
    if kind == "word":
        return (_UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), raw),)
    if kind in ("number", "variable_name", "file_descriptor"):
        return (raw,)
    if kind == "raw_string":
        return (raw[1:-1],)
    if kind == "ansi_c_string":
        return (ansi_c(raw[2:-1]),)
    if kind == "string":
        return _double_quoted(node)
    if kind == "translated_string":
        inner = [c for c in node.named_children if c.type == "string"]
        return shape_of(inner[0]) if len(inner) == 1 else (None,)
    if kind == "concatenation":
        return (None,) if joined_across_blanks(node) else _concatenated(node.children)
    if kind == "command_name":
        return shape_of(node.children[0]) if node.child_count == 1 else (None,)
    if kind in ("command_substitution", "``"):  # "``": the grammar's token for empty backquotes
        return (empty_substitution(raw),)
    return (None,)


def empty_substitution(raw: str) -> str | None:
    """The value of a command substitution with nothing in it: empty; None when it has a body.

    `$( )` and a pair of backquotes with only blanks between them run nothing and give nothing.
    The grammar reads a `$` before a backquote into the node: bash keeps it as a literal `$`.
    """
    match = _EMPTY_SUBSTITUTION.fullmatch(raw)
    return None if match is None else match.group(1) or ""


def joined_across_blanks(node: Node) -> bool:
    """A concatenation the grammar made across blanks: bash reads several words.

    tree-sitter-bash joins `echo`, empty backquotes and `c1` into one word across the spaces."""
    children = node.children
    return node.type == "concatenation" and any(
        left.end_byte != right.start_byte for left, right in itertools.pairwise(children)
    )


def _concatenated(children: Sequence[Node]) -> Shape:
    pieces: list[str | None] = []
    for index, child in enumerate(children):
        after = children[index + 1] if index + 1 < len(children) else None
        if text_of(child) == "$" and after is not None and text_of(after) == '""':
            continue  # `$""`: a translated empty string, empty (the `""` that follows adds nothing)
        pieces.extend(shape_of(child))
    return joined(pieces)


def _double_quoted(node: Node) -> Shape:
    """`"..."` as pieces: the text between expansions (escapes removed), None for each expansion."""
    data = node.text or b""
    if len(data) < 2 or not data.startswith(b'"') or not data.endswith(b'"'):
        return (None,)
    pieces: list[str | None] = []
    start = node.start_byte + 1
    for child in node.named_children:
        if child.type == "string_content":
            continue
        pieces.append(_quoted_text(data[start - node.start_byte : child.start_byte - node.start_byte]))
        pieces.append(empty_substitution(text_of(child)))
        start = child.end_byte
    pieces.append(_quoted_text(data[start - node.start_byte : -1]))
    return joined(pieces)


def _quoted_text(data: bytes) -> str | None:
    inner = data.decode("utf-8", "replace")
    if _DOUBLE_QUOTED_EXPANSION.search(inner):
        return None
    return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), inner)


def joined(pieces: Sequence[str | None]) -> Shape:
    """Adjacent known pieces joined, empty ones dropped, runs of unknown ones made one."""
    out: list[str | None] = []
    for piece in pieces:
        if piece == "":
            continue
        if out and (piece is None) == (out[-1] is None):
            out[-1] = None if piece is None else (out[-1] or "") + piece
        else:
            out.append(piece)
    return tuple(out) or ("",)


def _has_pattern(node: Node) -> bool:
    """An unquoted `*`, `?`, `[` or `{` that could turn the word into other words."""
    if node.type == "word":
        return bool(_PATTERN_CHARS & set(_UNQUOTED_ESCAPE.sub("", text_of(node))))
    if node.type in ("concatenation", "command_name"):
        return any(_has_pattern(child) for child in node.children)
    return node.type in ("brace_expression", "extglob_pattern")


def backquoted_body(raw: str, *, in_string: bool) -> str | None:
    """The command inside `` `raw` `` as bash runs it; None when bash would end it elsewhere.

    Inside backquotes a backslash keeps its meaning except before `$`, a backquote or a backslash
    (and, within double quotes, `"`): bash drops it there, so `` `echo \\`rm x\\`` `` runs `rm x`.
    """
    raw = raw.removeprefix("$")
    body = raw[1:-1] if len(raw) >= 2 and raw.endswith("`") else None
    if body is None or _BARE_BACKQUOTE.search(body):
        return None
    escape = _BACKQUOTE_ESCAPE_IN_STRING if in_string else _BACKQUOTE_ESCAPE
    return escape.sub(lambda m: m.group(1), body)


def ansi_c(body: str) -> str:
    """The value of `$'body'`: bash's backslash escapes (`\\n`, `\\x41`, `\\u00e9`, `\\101`, `\\cA`...)."""
    value = _ANSI_ESCAPE.sub(_ansi_escape, body)
    return value.split("\x00", 1)[0]  # bash ends the string at a NUL


def _ansi_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    head = code[0]
    if head in "xuU" and len(code) > 1:
        number = int(code[1:], 16)
        return chr(number) if number <= 0x10FFFF else ""
    if head.isdigit():
        return chr(int(code, 8) & 0xFF)
    if head == "c" and len(code) == 2:
        return chr(ord(code[1]) & 0x1F)
    return _ANSI_SIMPLE.get(code, "\\" + code)


def ansi_c_closes_at_end(raw: str) -> bool:
    """Whether `$'...'` ends at its last character, as bash reads it.

    tree-sitter-bash takes `$'\\\\'` followed by more text up to the next quote for one string,
    where bash ends the string after the escaped backslash (and runs what follows).
    """
    index = 2
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            index += 2
        elif char == "'":
            return index == len(raw) - 1
        else:
            index += 1
    return False


def loose_words(source: str) -> tuple[str, ...]:
    """A crude split of any text into words, quotes dropped: for failing closed on what cannot be parsed.

    Lines with expansions are split again as they may read once expanded: `${x:-rm} y` and
    `${x:-r}m y` also give `rm y`, `${x/a/rm}` gives `a/rm`, and `c$(echo)1` gives `c1`.
    """
    words = _loose_split(source)
    if "$" not in source and "`" not in source:
        return words
    expansions_cut = _loose_split(_EXPANSION_HEAD.sub("", source).replace("}", ""))
    return words + expansions_cut + _loose_split(without_expansions(source))


def without_expansions(source: str) -> str:
    """`source` as it reads when every substitution and expansion gives nothing (`c$(echo)1` -> `c1`)."""
    while True:
        shorter = _INNERMOST_EXPANSION.sub("", source)
        if shorter == source:
            return source
        source = shorter


def rough_commands(source: str) -> tuple[Shape, ...]:
    """Each command of a line that cannot be parsed, roughly: its words joined by single spaces,
    quotes dropped, each substitution or expansion an unknown piece (`c1 -$(echo r)f` -> `c1 -`,
    None, `f`). The command separators are guessed: bash may read some of them differently."""
    text = _unquoted_ansi_c(source)
    while True:
        shorter = _INNERMOST_EXPANSION.sub(_UNKNOWN, text)
        if shorter == text:
            break
        text = shorter
    commands = _ROUGH_SEPARATOR.split(_QUOTING.sub("", text))
    spaced = (" ".join(command.split()) for command in commands)
    return tuple(
        joined([None if part == _UNKNOWN else part for part in re.split(f"({_UNKNOWN})", command)])
        for command in spaced
        if command
    )


def _unquoted_ansi_c(source: str) -> str:
    text = _ANSI_C_STRING.sub(lambda m: "'" + ansi_c(m.group(1)) + "'", source)
    return text.replace('$"', '"').replace("\\\n", "")


def _loose_split(source: str) -> tuple[str, ...]:
    text = _unquoted_ansi_c(source)
    pieces = (_QUOTING.sub("", piece) for piece in _LOOSE_SPLIT.split(text))
    return tuple(piece for piece in pieces if piece)
