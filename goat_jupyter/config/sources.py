"""Which configuration files a session read, for `%goat status`."""

from __future__ import annotations

from pathlib import Path

from goat_jupyter.config.claude_files import claude_settings_files, instruction_files, read_object
from goat_jupyter.settings import user_settings_path, workspace_settings_path


def settings_files_read(workspace: Path) -> list[Path]:
    """Settings files that exist and hold a JSON object, lowest priority first."""
    candidates = [
        *claude_settings_files(workspace),
        user_settings_path(),
        workspace_settings_path(workspace),
    ]
    return [path for path in candidates if read_object(path) is not None]


def describe_sources(workspace: Path) -> str:
    """Two lines naming the settings and instruction files in use."""
    settings = ", ".join(map(str, settings_files_read(workspace))) or "none"
    instructions = ", ".join(map(str, instruction_files(workspace))) or "none"
    return f"settings files read: {settings}\ninstruction files read: {instructions}"
