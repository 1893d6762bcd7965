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

from goat_jupyter.permissions.shell.constructs import (
    EVALUATING,
    KNOWN,
    MAX_DEPTH,
    RESERVED,
    command_words,
    evaluates_quoted_code,
    has_code,
    is_redirected_body,
    is_statement,
    is_valid_text,
    node_text,
    stores_code,
    unparsed_substitution,
    value_of,
    writes_file,
)
from goat_jupyter.permissions.shell.syntax import (
    Shape,
    Word,
    ansi_c_closes_at_end,
    backquoted_body,
    empty_substitution,
    fold_ascii,
    joined_across_blanks,
    loose_words,
    parse,
    rough_commands,
    text_of,
)
from goat_jupyter.permissions.shell.wrappers import program, unwrap

# Names of configuration that only the user may change (sec-paths' permissions_protected replaces
# this at merge: keep the predicate in `_names_protected_path`).
_PROTECTED_NAMES = (".goat", ".claude", ".mcp.json")
_PATH_SEPARATORS = re.compile(r"[/=:,]")


@dataclass(frozen=True)
class Subcommand:
    """One simple command that can run; `writes_file` marks output redirected into a file.

    `words` are its command name and arguments with quotes removed (an expanding word keeps its
    source text, and `shapes` what is known of its value); `prefix` the `VAR=value` assignments
    before the name.
    """

    text: str
    writes_file: bool = False
    words: tuple[str, ...] = field(default=(), compare=False)
    prefix: tuple[str, ...] = field(default=(), compare=False)
    # When a word expands at run time: every word's known and unknown pieces (see `Shape`).
    shapes: tuple[Shape, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ShellAnalysis:
    """Every command a line can run, and why the list may be incomplete (`problems`)."""

    commands: tuple[Subcommand, ...]
    problems: tuple[str, ...]
    loose: tuple[str, ...]  # every word of the line, crudely split: deny rules scan it when uncertain
    protected: str | None  # a word naming protected configuration
    rough: tuple[Shape, ...] = ()  # when uncertain: its commands as `rough_commands` reads them

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
    problems = tuple(dict.fromkeys(walk.problems))
    rough = rough_commands(command) if problems else ()
    return ShellAnalysis(tuple(walk.commands), problems, loose, protected, rough)


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
        if depth > MAX_DEPTH:
            self.problems.append("commands are nested too deeply to check")
            return
        if "\x00" in source:
            self.problems.append("the command contains a NUL byte")
        if not is_valid_text(source):
            self.problems.append("the command is not valid UTF-8 text")
        # The parent travels with each node: tree-sitter's `Node.parent` walks down from the root.
        stack: list[tuple[Node, Node | None, bool]] = [(parse(source), None, writes)]
        while stack:
            node, parent, inherited = stack.pop()
            if not node.is_named and not node.is_missing:
                continue  # punctuation and keywords: `;`, `"`, `then`...
            if node.type == "command_substitution" and empty_substitution(text_of(node)) is not None:
                continue  # `$()` runs nothing (the grammar puts a missing command in it)
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
            self.problems.append(
                f"the backquoted command {node_text(node)[:40]!r} is read differently by bash"
            )
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
            return writes or any(writes_file(r) for r in node.children_by_field_name("redirect"))
        if kind == "command":
            self._command(node, parent, writes, depth)
        elif kind in ("declaration_command", "unset_command"):
            words = tuple(value_of(child) for child in node.children if child.type not in (";", "&"))
            self._add(Subcommand(node_text(node), writes, words))
        elif kind == "test_command":  # `[ ... ]` and `[[ ... ]]`: a command for the rules, like `test`
            self._add(Subcommand(node_text(node), writes, tuple(node_text(node).split())))
        elif kind in ("variable_assignment", "variable_assignments") and is_statement(parent):
            self._add(Subcommand(node_text(node), writes, (node_text(node),)))
        if (kind == "variable_assignment" and stores_code(node)) or evaluates_quoted_code(node):
            self.problems.append(f"{node_text(node)[:40]!r} holds shell code that bash may run later")
        return writes

    def _check_syntax(self, node: Node, parent: Node | None) -> None:
        if node.is_error or node.type == "ERROR":
            self.problems.append(f"the command could not be parsed near {node_text(node)[:40]!r}")
        elif node.is_missing:
            self.problems.append(f"the command is incomplete (missing {node.type!r})")
        elif node.is_named and node.type not in KNOWN:
            self.problems.append(f"the construct {node.type!r} is not known to this check")
        elif node.type == "ansi_c_string" and not ansi_c_closes_at_end(text_of(node)):
            self.problems.append(f"the quoting of {node_text(node)[:40]!r} is read differently by bash")
        elif joined_across_blanks(node):
            self.problems.append(f"the words {node_text(node)[:40]!r} are read differently by bash")
        elif unparsed_substitution(node, parent):
            self.problems.append(f"a command substitution in {node_text(node)[:40]!r} was not parsed")

    def _command(self, node: Node, parent: Node | None, writes: bool, depth: int) -> None:
        words = command_words(node)
        if not words:
            return
        own = any(writes_file(child) for child in node.children if child.type == "file_redirect")
        prefix = tuple(node_text(c) for c in node.children if c.type == "variable_assignment")
        text = node_text(parent if parent is not None and is_redirected_body(node, parent) else node)
        self.run(words, text, writes=writes or own, prefix=prefix, depth=depth)

    def run(
        self, words: Sequence[Word], text: str, *, writes: bool, prefix: tuple[str, ...] = (), depth: int
    ) -> None:
        """Record one simple command, then what it runs if it is a wrapper."""
        head = words[0]
        if not head.literal or head.pattern:
            self.problems.append(f"the command name {head.text[:40]!r} is only known when it runs")
        elif head.text in RESERVED:
            self.problems.append(f"{head.text!r} is used in a way this check does not follow")
        if program(head) in EVALUATING and any(w.literal and has_code(w.text) for w in words[1:]):
            self.problems.append(f"{program(head)} may evaluate the shell code in its arguments")
        shapes = tuple(w.pieces() for w in words) if not all(w.literal for w in words) else ()
        self._add(Subcommand(text, writes, tuple(w.text for w in words), prefix, shapes))
        self.patterns.extend(w.text for w in words if w.pattern)
        self._look_through(words, writes, depth)

    def _look_through(self, words: Sequence[Word], writes: bool, depth: int) -> None:
        inner = unwrap(words)
        if inner is None:
            return
        if depth >= MAX_DEPTH:
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
