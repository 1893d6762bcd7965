"""Which layer above the user's settings file (the one the panel edits) decides a setting, in words."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goat_jupyter.config.claude_files import read_object
from goat_jupyter.config.project import project_goat_settings, trusted_goat_settings
from goat_jupyter.config.trust import approval_for
from goat_jupyter.settings import ENV_KEYS, user_settings_path, workspace_settings_path


@dataclass(frozen=True)
class Override:
    """`key` is `value` because of `by`, whatever the user file (the panel) says."""

    key: str
    value: str
    by: str
    panel_value: str | None = None  # what ~/.goat/settings.json holds, when it holds the key

    def text(self) -> str:
        ignored = f"; the settings panel's {self.panel_value!r} is not used" if self.panel_value else ""
        return f"{self.key} = {self.value!r} comes from {self.by}{ignored}"


def overrides(workspace: Path | None, environ: Mapping[str, str] | None = None) -> list[Override]:
    """Settings the panel shows that a project file or the environment replaces (environment wins)."""
    env = os.environ if environ is None else environ
    user = _object(user_settings_path())
    project = _project(workspace) if workspace is not None else {}
    found: list[Override] = []
    for variable, key in ENV_KEYS.items():
        panel = _text(user.get(key))
        if env.get(variable):
            found.append(Override(key, env[variable], f"the environment variable {variable}", panel))
        elif workspace is not None and _text(project.get(key)):
            path = workspace_settings_path(workspace)
            found.append(Override(key, _text(project.get(key)) or "", f"the project file {path}", panel))
    return found


def _project(workspace: Path) -> dict[str, Any]:
    """What the project file sets that applies: a mode waiting for trust replaces nothing yet."""
    return trusted_goat_settings(project_goat_settings(workspace), approval_for(workspace).covers)


def _object(path: Path) -> dict[str, Any]:
    return read_object(path) or {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
