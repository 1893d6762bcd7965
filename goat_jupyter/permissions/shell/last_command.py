"""The command whose exit code a line returns, for the Bash tool's exit-code rule
(`a && b | grep x` -> grep)."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from goat_jupyter.permissions.shell.constructs import MAX_DEPTH, command_words, node_text
from goat_jupyter.permissions.shell.syntax import Word, fold_ascii, parse
from goat_jupyter.permissions.shell.wrappers import PASS_EXIT, SHELLS, program, unwrap


def last_command_name(command: str, depth: int = 0) -> str | None:
    """Program name of the command whose exit code the line returns (`a && b | grep x` -> grep).

    None when that is unclear: a parse error, a compound command, `!`, a dynamic name.
    """
    root = parse(fold_ascii(command))
    if root.has_error or depth > MAX_DEPTH:
        return None
    node: Node | None = _last_statement(root)
    while node is not None and node.type != "command":
        if node.type == "test_command":
            return node_text(node).split()[0]
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
