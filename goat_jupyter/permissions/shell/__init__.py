"""Bash analysis for permission rules: syntax (tree-sitter-bash), wrappers (`sudo`, `bash -c`, ...),
constructs (what a node means for the rules), analysis (every command a line would run, failing
closed) and last_command (whose exit code a line returns). Nothing is executed."""

from __future__ import annotations

from goat_jupyter.permissions.shell.analysis import (
    ShellAnalysis,
    Subcommand,
    analyse,
    protected_config_guard,
    split_command,
)
from goat_jupyter.permissions.shell.last_command import last_command_name

__all__ = [
    "ShellAnalysis",
    "Subcommand",
    "analyse",
    "last_command_name",
    "protected_config_guard",
    "split_command",
]
