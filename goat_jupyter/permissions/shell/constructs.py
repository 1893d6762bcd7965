"""What the shell analysis knows about tree-sitter-bash nodes: the constructs it follows, a command's
words, shell code hidden in quoted text that bash may still run, and output redirected into files."""

from __future__ import annotations

import re

from tree_sitter import Node

from goat_jupyter.permissions.shell.syntax import Word, literal, quoted_heredoc, text_of, word_of

_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
MAX_DEPTH = 12  # nested `bash -c` scripts and wrappers of wrappers
# Words the grammar only takes as a command name when it misread a construct (`time { ...; }`).
RESERVED = frozenset(
    {"{", "}", "then", "fi", "do", "done", "esac", "elif", "else", "in", "]]", "function", "select"}
    | {"case", "if", "while", "until", "for", "!", "[[", "((", "))"}
)
NOT_A_STATEMENT = frozenset(
    {"command", "declaration_command", "variable_assignments", "c_style_for_statement"}
)
KNOWN = frozenset(
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
# Builtins that may evaluate array subscripts in their arguments (`test -v 'a[$(rm y)]'`).
EVALUATING = frozenset(
    {"test", "[", "printf", "read", "declare", "typeset", "local", "export", "readonly", "unset", "let"}
    | {"mapfile", "readarray", "getopts", "wait", "printf", "shopt"}
)
_QUOTED = frozenset({"raw_string", "ansi_c_string", "string", "word", "concatenation"})
_UNESCAPED_SUBSTITUTION = re.compile(r"(?<!\\)(?:\\\\)*(?:`|\$\()")


def command_words(node: Node) -> list[Word]:
    """The command name and arguments of a `command` node (assignments and redirections left out).

    Nodes with no blank between them are one word for bash: the grammar reads c, a backquoted
    `echo`, 1 as the name `c` and an argument, and `-r`, the same, `f` as two arguments.
    """
    name = node.child_by_field_name("name")
    if name is None:
        return []
    words = [name, *node.children_by_field_name("argument")]
    groups: list[list[Node]] = []
    for word in words:
        if groups and groups[-1][-1].end_byte == word.start_byte:
            groups[-1].append(word)
        else:
            groups.append([word])
    return [word_of(*group) for group in groups]


def value_of(node: Node) -> str:
    value = literal(node)
    return node_text(node) if value is None else value


def node_text(node: Node | None) -> str:
    return "" if node is None else text_of(node).replace("\\\n", "").strip()


def is_statement(parent: Node | None) -> bool:
    return parent is None or parent.type not in NOT_A_STATEMENT


def is_redirected_body(node: Node, parent: Node) -> bool:
    return parent.type == "redirected_statement" and parent.child_by_field_name("body") == node


def is_valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def has_code(text: str) -> bool:
    return "$(" in text or "`" in text


def stores_code(assignment: Node) -> bool:
    """`x='a[$(rm y)]'`: arithmetic on `$x` (`$((x))`, `[[ $x -eq 1 ]]`) or `${x@P}` would run it."""
    value = assignment.child_by_field_name("value")
    text = literal(value) if value is not None else None
    return text is not None and has_code(text)


def evaluates_quoted_code(node: Node) -> bool:
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
        if value is not None and has_code(value):
            return True
        stack.extend(child.children)
    return False


def unparsed_substitution(node: Node, parent: Node | None) -> bool:
    """Text the grammar left raw that bash would still expand (backticks in here-documents, nested ones)."""
    if node.type == "heredoc_body":
        if node.named_child_count or quoted_heredoc(node, parent):
            return False
    elif node.type not in ("word", "string_content", "heredoc_content"):
        return False
    return _UNESCAPED_SUBSTITUTION.search(text_of(node)) is not None


def writes_file(redirect: Node) -> bool:
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
