"""Bash analysis for permission rules: syntax (tree-sitter-bash), wrappers (`sudo`, `bash -c`, ...)
and analysis (every command a line would run, failing closed). Nothing is executed."""

from __future__ import annotations

from goat_jupyter.permissions.shell.analysis import (
    ShellAnalysis,
    Subcommand,
    analyse,
    last_command_name,
    protected_config_guard,
    split_command,
)

__all__ = [
    "ShellAnalysis",
    "Subcommand",
    "analyse",
    "last_command_name",
    "protected_config_guard",
    "split_command",
]
