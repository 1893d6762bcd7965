"""What a shell command line would run, for permission rules (no execution), failing closed.

The line is parsed with tree-sitter-bash. Every simple command that can run is listed: those in
lists, pipelines, compound commands (if/while/until/for/select/case, `{ }`, subshells), function
bodies, `!` and `time`, command and process substitutions, here-documents, and the commands that
wrappers run (`sudo rm x` -> `rm x`; `bash -c '...'`, `eval`, `watch`, `parallel`, `trap` scripts
are parsed in turn; see wrappers.py). When something cannot be known for certain (a parse error,
a command name computed at run time, a construct the grammar does not know), the analysis lists the
problem: no allow rule then applies, and deny rules are matched against every word of the line.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from tree_sitter import Node

from goat_jupyter.permissions.shell.syntax import (
    Word,
    ansi_c_closes_at_end,
    backquoted_body,
    fold_ascii,
    literal,
    loose_words,
    parse,
    quoted_heredoc,
    text_of,
    word_of,
)
from goat_jupyter.permissions.shell.wrappers import PASS_EXIT, SHELLS, program, unwrap

_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_MAX_DEPTH = 12  # nested `bash -c` scripts and wrappers of wrappers
# Words the grammar only takes as a command name when it misread a construct (`time { ...; }`).
_RESERVED = frozenset(
    {"{", "}", "then", "fi", "do", "done", "esac", "elif", "else", "in", "]]", "function", "select"}
    | {"case", "if", "while", "until", "for", "!", "[[", "((", "))"}
)
_NOT_A_STATEMENT = frozenset(
    {"command", "declaration_command", "variable_assignments", "c_style_for_statement"}
)
_KNOWN = frozenset(
    {
        "ansi_c_string",
        "arithmetic_expansion",
        "array",
        "binary_expression",
        "brace_expression",
        "c_style_for_statement",
        "case_item",
        "case_statement",
        "command",
        "command_name",
        "command_substitution",
        "comment",
        "compound_statement",
        "concatenation",
        "declaration_command",
        "do_group",
        "elif_clause",
        "else_clause",
        "expansion",
        "extglob_pattern",
        "file_descriptor",
        "file_redirect",
        "for_statement",
        "function_definition",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "heredoc_redirect",
        "heredoc_start",
        "herestring_redirect",
        "if_statement",
        "list",
        "negated_command",
        "number",
        "parenthesized_expression",
        "pipeline",
        "postfix_expression",
        "process_substitution",
        "program",
        "raw_string",
        "redirected_statement",
        "regex",
        "simple_expansion",
        "special_variable_name",
        "string",
        "string_content",
        "subscript",
        "subshell",
        "ternary_expression",
        "test_command",
        "test_operator",
        "translated_string",
        "unary_expression",
        "unset_command",
        "variable_assignment",
        "variable_assignments",
        "variable_name",
        "while_statement",
        "word",
    }
)
# Names of configuration that only the user may change (sec-paths' permissions_protected replaces
# this at merge: keep the predicate in `_names_protected_path`).
_PROTECTED_NAMES = (".goat", ".claude", ".mcp.json")
# Builtins that may evaluate array subscripts in their arguments (`test -v 'a[$(rm y)]'`).
_EVALUATING = frozenset(
    {"test", "[", "printf", "read", "declare", "typeset", "local", "export", "readonly", "unset", "let"}
    | {"mapfile", "readarray", "getopts", "wait", "printf", "shopt"}
)
_QUOTED = frozenset({"raw_string", "ansi_c_string", "string", "word", "concatenation"})
_UNESCAPED_SUBSTITUTION = re.compile(r"(?<!\\)(?:\\\\)*(?:`|\$\()")
_PATH_SEPARATORS = re.compile(r"[/=:,]")


@dataclass(frozen=True)
class Subcommand:
    """One simple command that can run; `writes_file` marks output redirected into a file.

    `words` are its command name and arguments with quotes removed (an expanding word keeps its
    source text); `prefix` the `VAR=value` assignments before the name.
    """

    text: str
    writes_file: bool = False
    words: tuple[str, ...] = field(default=(), compare=False)
    prefix: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ShellAnalysis:
    """Every command a line can run, and why the list may be incomplete (`problems`)."""

    commands: tuple[Subcommand, ...]
    problems: tuple[str, ...]
    loose: tuple[str, ...]  # every word of the line, crudely split: deny rules scan it when uncertain
    protected: str | None  # a word naming protected configuration

    @property
    def certain(self) -> bool:
        return not self.problems


@functools.lru_cache(maxsize=256)
def analyse(command: str) -> ShellAnalysis:
    """The analysis of one command line (cached: rules are matched against it many times).

    Non-ASCII characters are folded to ASCII first (see `fold_ascii`): words in the result use that
    spelling, and rules are compared in it too.
    """
    command = fold_ascii(command)
    walk = _Walk()
    try:
        walk.script(command, writes=False, depth=0)
    except RecursionError:
        walk.problems.append("the command is nested too deeply to check")
    except Exception as exc:  # a check that breaks must fail closed, never end the run
        walk.problems.append(f"the command could not be analysed ({type(exc).__name__})")
    words = [w for part in walk.commands for w in part.words]
    # A word of a script a wrapper runs may still hold quoting that script's shell reads again
    # (`eval '$'"'"'\x72m'"'"''` -> `$'\x72m'` -> `rm`): its loose split decodes that too.
    again = (piece for w in words if "$'" in w or "\\" in w for piece in loose_words(w))
    loose = (*loose_words(command), *words, *again)
    protected = next((w for w in loose if _names_protected_path(w)), None) or next(
        (w for w in walk.patterns if _may_match_protected(w)), None
    )
    return ShellAnalysis(tuple(walk.commands), tuple(dict.fromkeys(walk.problems)), loose, protected)


def split_command(command: str) -> tuple[Subcommand, ...]:
    """Every simple command in `command`, including those inside substitutions and wrappers."""
    return analyse(command).commands


def protected_config_guard(command: str) -> str | None:
    """Why a command naming protected configuration always asks (in every mode); None otherwise."""
    named = analyse(command).protected
    if named is None:
        return None
    return (
        f"This command names protected configuration ({named!r}): settings, permissions and hooks "
        "may only change with the user's approval, in every permission mode."
    )


def _names_protected_path(word: str) -> bool:
    """Whether `word` names protected configuration (the one predicate sec-paths' module replaces)."""
    return any(part in _PROTECTED_NAMES for part in _PATH_SEPARATORS.split(word))


def _may_match_protected(pattern: str) -> bool:
    """Whether an unquoted glob such as `.g*` or `.[gc]*` may expand to protected configuration."""
    parts = _PATH_SEPARATORS.split(pattern)
    return any(
        part.startswith(".") and any(fnmatch.fnmatchcase(name, part) for name in _PROTECTED_NAMES)
        for part in parts
    )


class _Walk:
    """Collects commands and problems over a tree, and over the scripts wrappers run."""

    def __init__(self) -> None:
        self.commands: list[Subcommand] = []
        self.problems: list[str] = []
        self.patterns: list[str] = []  # unquoted globs among the words

    def script(self, source: str, *, writes: bool, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.problems.append("commands are nested too deeply to check")
            return
        if "\x00" in source:
            self.problems.append("the command contains a NUL byte")
        if not _is_valid_text(source):
            self.problems.append("the command is not valid UTF-8 text")
        # The parent travels with each node: tree-sitter's `Node.parent` walks down from the root.
        stack: list[tuple[Node, Node | None, bool]] = [(parse(source), None, writes)]
        while stack:
            node, parent, inherited = stack.pop()
            if not node.is_named and not node.is_missing:
                continue  # punctuation and keywords: `;`, `"`, `then`...
            if self._backquoted(node, parent, inherited, depth):
                continue
            below = self._visit(node, parent, inherited, depth)
            stack.extend((child, node, below) for child in reversed(node.children))

    def _backquoted(self, node: Node, parent: Node | None, writes: bool, depth: int) -> bool:
        """A `...` substitution with backslashes in it: its body is read again after bash's unescaping.

        Inside backquotes a backslash-backquote starts a nested substitution (`echo \\`rm x\\``),
        which the grammar takes for a literal backtick. Returns whether the body was handled here.
        """
        raw = text_of(node)
        if node.type != "command_substitution" or not raw.startswith(("`", "$`")):
            return False  # (the grammar reads `$` before a backquote into the node: bash, a literal `$`)
        body = backquoted_body(raw, in_string=parent is not None and parent.type == "string")
        if body is None:
            self.problems.append(f"the backquoted command {_text(node)[:40]!r} is read differently by bash")
            return True
        if "\\" not in raw:
            return False  # nothing to unescape: the grammar's reading is bash's
        self.script(body, writes=writes, depth=depth + 1)
        return True

    def _visit(self, node: Node, parent: Node | None, writes: bool, depth: int) -> bool:
        """Record what `node` runs; returns whether the commands below it write into a file."""
        self._check_syntax(node, parent)
        kind = node.type
        if kind == "redirected_statement":
            return writes or any(_writes_file(r) for r in node.children_by_field_name("redirect"))
        if kind == "command":
            self._command(node, parent, writes, depth)
        elif kind in ("declaration_command", "unset_command"):
            words = tuple(_value(child) for child in node.children if child.type not in (";", "&"))
            self._add(Subcommand(_text(node), writes, words))
        elif kind == "test_command":  # `[ ... ]` and `[[ ... ]]`: a command for the rules, like `test`
            self._add(Subcommand(_text(node), writes, tuple(_text(node).split())))
        elif kind in ("variable_assignment", "variable_assignments") and _is_statement(parent):
            self._add(Subcommand(_text(node), writes, (_text(node),)))
        if (kind == "variable_assignment" and _stores_code(node)) or _evaluates_quoted_code(node):
            self.problems.append(f"{_text(node)[:40]!r} holds shell code that bash may run later")
        return writes

    def _check_syntax(self, node: Node, parent: Node | None) -> None:
        if node.is_error or node.type == "ERROR":
            self.problems.append(f"the command could not be parsed near {_text(node)[:40]!r}")
        elif node.is_missing:
            self.problems.append(f"the command is incomplete (missing {node.type!r})")
        elif node.is_named and node.type not in _KNOWN:
            self.problems.append(f"the construct {node.type!r} is not known to this check")
        elif node.type == "ansi_c_string" and not ansi_c_closes_at_end(text_of(node)):
            self.problems.append(f"the quoting of {_text(node)[:40]!r} is read differently by bash")
        elif _unparsed_substitution(node, parent):
            self.problems.append(f"a command substitution in {_text(node)[:40]!r} was not parsed")

    def _command(self, node: Node, parent: Node | None, writes: bool, depth: int) -> None:
        words = command_words(node)
        if not words:
            return
        own = any(_writes_file(child) for child in node.children if child.type == "file_redirect")
        prefix = tuple(_text(c) for c in node.children if c.type == "variable_assignment")
        text = _text(parent if parent is not None and _is_redirected_body(node, parent) else node)
        self.run(words, text, writes=writes or own, prefix=prefix, depth=depth)

    def run(
        self, words: Sequence[Word], text: str, *, writes: bool, prefix: tuple[str, ...] = (), depth: int
    ) -> None:
        """Record one simple command, then what it runs if it is a wrapper."""
        head = words[0]
        if not head.literal or head.pattern:
            self.problems.append(f"the command name {head.text[:40]!r} is only known when it runs")
        elif head.text in _RESERVED:
            self.problems.append(f"{head.text!r} is used in a way this check does not follow")
        if program(head) in _EVALUATING and any(w.literal and _has_code(w.text) for w in words[1:]):
            self.problems.append(f"{program(head)} may evaluate the shell code in its arguments")
        self._add(Subcommand(text, writes, tuple(w.text for w in words), prefix))
        self.patterns.extend(w.text for w in words if w.pattern)
        self._look_through(words, writes, depth)

    def _look_through(self, words: Sequence[Word], writes: bool, depth: int) -> None:
        inner = unwrap(words)
        if inner is None:
            return
        if depth >= _MAX_DEPTH:
            self.problems.append("commands are nested too deeply to check")
            return
        if inner.problem:
            self.problems.append(inner.problem)
        if inner.argv:
            text = shlex.join([*inner.prefix, *(w.text for w in inner.argv)])
            self.run(inner.argv, text, writes=writes, prefix=inner.prefix, depth=depth + 1)
        for argv in filter(None, inner.commands):
            self.run(argv, shlex.join(w.text for w in argv), writes=writes, depth=depth + 1)
        for script in inner.scripts:
            self.script(script, writes=writes, depth=depth + 1)

    def _add(self, part: Subcommand) -> None:
        if part.text.strip():
            self.commands.append(part)


def command_words(node: Node) -> list[Word]:
    """The command name and arguments of a `command` node (assignments and redirections left out)."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    inner = name.named_children
    head = word_of(inner[0]) if len(inner) == 1 else Word(_text(name), literal=False)
    return [head, *(word_of(arg) for arg in node.children_by_field_name("argument"))]


def _value(node: Node) -> str:
    value = literal(node)
    return _text(node) if value is None else value


def _text(node: Node | None) -> str:
    return "" if node is None else text_of(node).replace("\\\n", "").strip()


def _is_statement(parent: Node | None) -> bool:
    return parent is None or parent.type not in _NOT_A_STATEMENT


def _is_redirected_body(node: Node, parent: Node) -> bool:
    return parent.type == "redirected_statement" and parent.child_by_field_name("body") == node


def _is_valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _has_code(text: str) -> bool:
    return "$(" in text or "`" in text


def _stores_code(assignment: Node) -> bool:
    """`x='a[$(rm y)]'`: arithmetic on `$x` (`$((x))`, `[[ $x -eq 1 ]]`) or `${x@P}` would run it."""
    value = assignment.child_by_field_name("value")
    text = literal(value) if value is not None else None
    return text is not None and _has_code(text)


def _evaluates_quoted_code(node: Node) -> bool:
    """Quoted code in a context that evaluates array subscripts: `[[ -v 'a[$(rm y)]' ]]`, `$(( ... ))`."""
    arithmetic = (
        node.type in ("test_command", "arithmetic_expansion", "c_style_for_statement")
        or (node.type == "compound_statement" and text_of(node).startswith("(("))
        or node.type in ("declaration_command", "unset_command")
    )
    if not arithmetic:
        return False
    stack = list(node.children)
    while stack:
        child = stack.pop()
        value = literal(child) if child.type in _QUOTED else None
        if value is not None and _has_code(value):
            return True
        stack.extend(child.children)
    return False


def _unparsed_substitution(node: Node, parent: Node | None) -> bool:
    """Text the grammar left raw that bash would still expand (backticks in here-documents, nested ones)."""
    if node.type == "heredoc_body":
        if node.named_child_count or quoted_heredoc(node, parent):
            return False
    elif node.type not in ("word", "string_content", "heredoc_content"):
        return False
    return _UNESCAPED_SUBSTITUTION.search(text_of(node)) is not None


def _writes_file(redirect: Node) -> bool:
    """An output redirection into a real file (`> f`, `>> f`, `&> f`, `>& f`; not `2>&1` or /dev/null)."""
    if redirect.type != "file_redirect":
        return False
    operator = next((c.type for c in redirect.children if not c.is_named), "")
    if operator not in _WRITE_OPERATORS:
        return False
    target = redirect.child_by_field_name("destination")
    if target is None:
        return True
    value = literal(target)
    if operator == ">&" and value is not None and (value.isdigit() or value == "-"):
        return False
    return value not in _SAFE_TARGETS


# --- the last command, for the Bash tool's exit-code rule -------------------------------------


def last_command_name(command: str, depth: int = 0) -> str | None:
    """Program name of the command whose exit code the line returns (`a && b | grep x` -> grep).

    None when that is unclear: a parse error, a compound command, `!`, a dynamic name.
    """
    root = parse(fold_ascii(command))
    if root.has_error or depth > _MAX_DEPTH:
        return None
    node: Node | None = _last_statement(root)
    while node is not None and node.type != "command":
        if node.type == "test_command":
            return _text(node).split()[0]
        if node.type in ("list", "pipeline", "subshell", "compound_statement"):
            node = _last_statement(node)
        elif node.type == "redirected_statement":
            node = _heredoc_tail(node) or node.child_by_field_name("body")
        else:
            return None
    return None if node is None else _exit_name(command_words(node), depth)


def _heredoc_tail(node: Node) -> Node | None:
    """`cat <<EOF | grep x`: the grammar puts what follows the here-doc operator inside the redirect."""
    tails = [
        child
        for redirect in node.children
        if redirect.type == "heredoc_redirect"
        for child in redirect.named_children
        if child.type in ("pipeline", "list", "command", "redirected_statement")
    ]
    return tails[-1] if tails else None


def _last_statement(node: Node) -> Node | None:
    statements = [c for c in node.named_children if c.type not in ("comment", "heredoc_body")]
    return statements[-1] if statements else None


def _exit_name(words: Sequence[Word], depth: int) -> str | None:
    if not words or not words[0].literal or words[0].pattern:
        return None
    name = program(words[0])
    inner = unwrap(words)
    if inner is None or inner.problem:
        return name if inner is None else None
    if name in PASS_EXIT and inner.argv:
        return _exit_name(inner.argv, depth + 1)
    if name in SHELLS and inner.scripts:
        return last_command_name(inner.scripts[0], depth + 1)
    return name
