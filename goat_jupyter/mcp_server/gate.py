"""Whether this Jupyter server serves MCP: off unless the user turned it on (user settings or the
server's own configuration, never a project file), and never when the managed policy forbids it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.managed import load_managed
from goat_jupyter.settings import user_settings_path
from goat_jupyter.text import loads_json

SETTING = "mcp_server"  # in ~/.goat/settings.json: {"mcp_server": {"enabled": true}}
MANAGED_KEY = "disable_mcp_server"  # in a managed settings file: true forbids serving
FLAG = "GoatMcp"  # the server's configuration section: --GoatMcp.enabled=True


@dataclass(frozen=True)
class Gate:
    """The answer and the sentence that explains it (for the panel and for logs)."""

    enabled: bool
    reason: str


def set_user_enabled(enabled: bool) -> None:
    """The panel's switch: the user's own settings file, every other key kept; a file that is not a
    JSON object is left alone (SettingsFileError-like ValueError), so nothing the user wrote is lost."""
    path = user_settings_path()
    data: object = {}
    if path.exists():
        data = loads_json(path.read_text(encoding="utf-8"))  # ValueError on a broken file
        if not isinstance(data, dict):
            raise ValueError(f"{path} does not hold a JSON object; fix it before turning MCP on here.")
    settings = cast("dict[str, Any]", data)
    block = settings.get(SETTING)
    settings[SETTING] = {
        **(cast("dict[str, Any]", block) if isinstance(block, dict) else {}),
        "enabled": enabled,
    }
    write_atomically(path, json.dumps(settings, indent=2) + "\n")


def user_enabled() -> bool:
    """The user's own settings file says serve (the workspace's .goat/settings.json is never read)."""
    try:
        data = loads_json(user_settings_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    block = cast("dict[str, Any]", data).get(SETTING) if isinstance(data, dict) else None
    return isinstance(block, dict) and cast("dict[str, Any]", block).get("enabled") is True


def gate(server_config: Mapping[str, Any] | None = None) -> Gate:
    """Checked on every request, so turning it off takes effect at once."""
    policy = load_managed()
    if policy.broken:
        return Gate(False, policy.broken_text() or "the managed policy cannot be read")
    if policy.data.get(MANAGED_KEY) is True:
        return Gate(False, f"serving MCP is forbidden by {policy.reason}")
    if server_config is not None and _true(server_config.get("enabled")):
        return Gate(True, f"turned on for this server (--{FLAG}.enabled=True)")
    if user_enabled():
        return Gate(True, f'turned on in {user_settings_path()} ("{SETTING}": {{"enabled": true}})')
    return Gate(False, f"off: turn it on in the goat settings panel or with --{FLAG}.enabled=True")


def _true(value: object) -> bool:
    """A command line value arrives as text (traitlets defers its parsing for unknown sections)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")
