"""Settings: defaults < ~/.goat/settings.json < .goat/settings.json < environment < runtime, all under
the managed policy (config/managed.py), which nothing below it can go beyond."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import ValidationError

from goat_jupyter.config.claude_files import claude_permissions
from goat_jupyter.config.limits import lowered_limits
from goat_jupyter.config.managed import load_managed
from goat_jupyter.config.model import OUTPUT_STYLES as OUTPUT_STYLES
from goat_jupyter.config.model import PERMISSION_MODES as PERMISSION_MODES
from goat_jupyter.config.model import REPLAY_MODES as REPLAY_MODES
from goat_jupyter.config.model import USER, Settings, fields_of, resolve_names
from goat_jupyter.config.model import OutputStyle as OutputStyle
from goat_jupyter.config.model import PermissionMode as PermissionMode
from goat_jupyter.config.model import PermissionRules as PermissionRules
from goat_jupyter.config.model import ReplayMode as ReplayMode
from goat_jupyter.config.model import ToolProfile as ToolProfile
from goat_jupyter.config.project import allow_key, goat_home, read_project, trusted_goat_settings
from goat_jupyter.config.trust import approval_for
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.text import loads_json

# Settings the Config tool and `%goat config` may change at runtime (flat, scalar values).
RUNTIME_KEYS: tuple[str, ...] = (
    "model",
    "small_model",
    "permission_mode",
    "output_style",
    "replay",
    "max_turns",
    "temperature",
    "max_tokens",
    "show_usage",
    "web_search_provider",
    "max_cost_per_run",
    "max_cost_per_session",
    "max_tokens_per_run",
    "max_cost_per_user_per_day",
)

# Settings only the user may change at runtime (`%goat config`), never the model's Config tool:
# an endpoint the model chose could receive the conversation and the API key.
USER_KEYS: tuple[str, ...] = fields_of(USER)

_ENV_KEYS = {
    "GOAT_MODEL": "model",
    "GOAT_SMALL_MODEL": "small_model",
    "GOAT_PERMISSION_MODE": "permission_mode",
}
ENV_KEYS: Mapping[str, str] = _ENV_KEYS  # variable -> setting, for saying what overrides what


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` over `base`: rule lists and hooks are joined (a later file cannot drop an earlier
    file's deny rule or hook), MCP servers merged by name, anything else replaced."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if key in ("permissions", "hooks") and isinstance(value, dict) and isinstance(old, dict):
            merged[key] = _join_lists(cast("dict[str, Any]", old), cast("dict[str, Any]", value))
        elif key == "mcp_servers" and isinstance(value, dict) and isinstance(old, dict):
            merged[key] = {**cast("dict[str, Any]", old), **cast("dict[str, Any]", value)}
        else:
            merged[key] = value
    return merged


def _join_lists(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    joined = dict(base)
    for name, items in extra.items():
        if isinstance(items, list) and isinstance(joined.get(name), list):
            joined[name] = [*joined[name], *cast("list[Any]", items)]
        else:
            joined[name] = items
    return joined


def user_settings_path() -> Path:
    return goat_home() / "settings.json"


def workspace_settings_path(workspace: Path) -> Path:
    return workspace / ".goat" / "settings.json"


def load_settings(workspace: Path, environ: dict[str, str] | None = None) -> Settings:
    """Layer the user file, the workspace file and the environment over the defaults.

    Every file is read under the settings' own field names first (config/model.py), so each rule
    sees one spelling. The workspace's files count only with what folder trust approved of their
    widening parts (config/trust.py): until then its servers, hooks, allow rules, wider modes and
    user-only settings are left out, and its limits apply only where they lower the user's. A file
    with invalid values is skipped, the workspace's first, so it cannot drop the user's rules.
    """
    env = os.environ if environ is None else environ
    approval = approval_for(workspace, env)
    claude = claude_permissions(workspace, project_allow=lambda rule: approval.covers(allow_key(rule)))
    user = _merge(claude, resolve_names(_read_json(user_settings_path())))
    trusted = trusted_goat_settings(read_project(workspace).goat, approval.covers)
    project, notes = lowered_limits(trusted, _validated_or_defaults(user))
    for layers in ((user, project), (user,), ()):
        data: dict[str, Any] = {}
        for layer in layers:
            data = _merge(data, layer)
        try:
            settings = _managed(_with_environment(data, env), env)
        except ValidationError:
            continue
        settings.project_notes.extend(notes if len(layers) == 2 else [])
        return settings
    settings = Settings.model_validate(_with_environment({}, env))  # broken files: defaults + environment
    if load_managed(env).active:  # the policy's own values are invalid: never run without it
        settings.managed_broken = "The managed policy holds a value goat cannot use, so goat does not run until your administrator fixes it."
    return settings


def _validated_or_defaults(data: dict[str, Any]) -> Settings:
    """The user's own layers as settings (the defaults when they are invalid: then nothing of the
    project applies anyway)."""
    try:
        return Settings.model_validate(data)
    except ValidationError:
        return Settings()


def _managed(data: dict[str, Any], env: Mapping[str, str]) -> Settings:
    """The managed policy over every other layer; what it refused is kept on the settings."""
    policy = load_managed(env)
    if not policy.active:
        return Settings.model_validate(data)
    data, notes = policy.apply(data)
    settings = Settings.model_validate(data)
    settings.managed_notes.extend(notes)
    return settings


def _with_environment(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    data = dict(data)
    rules = data.get("permissions")
    start_mode = cast("dict[str, Any]", rules).get("default_mode") if isinstance(rules, dict) else None
    if start_mode and "permission_mode" not in data:
        data["permission_mode"] = start_mode  # Claude Code's way to set the starting mode
    for var, key in _ENV_KEYS.items():
        if env.get(var):
            data[key] = env[var]
    return data


# What each runtime setting accepts, in words, for error messages and the Config listing.
VALUE_HINTS: dict[str, str] = {
    "model": "a model name, e.g. gpt-4o-mini or anthropic/claude-sonnet-4-5",
    "small_model": "a model name, or none to use the main model",
    "permission_mode": "one of " + ", ".join(PERMISSION_MODES),
    "output_style": "one of " + ", ".join(OUTPUT_STYLES),
    "replay": "one of " + ", ".join(REPLAY_MODES) + " (when a %%goat cell replays its recording)",
    "max_turns": "a whole number from 1 to 1000",
    "temperature": "a number from 0 to 2, or none for the provider's default",
    "max_tokens": "a whole number of at least 1, or none for the provider's default",
    "show_usage": "true or false",
    "web_search_provider": "the name of a web search provider, e.g. duckduckgo",
    "max_cost_per_run": "dollars a %%goat run may spend, e.g. 0.50, or none for no limit",
    "max_cost_per_session": "dollars the whole session may spend, e.g. 5, or none for no limit",
    "max_tokens_per_run": "tokens (prompt + answer) a %%goat run may use, or none for no limit",
    "max_cost_per_user_per_day": "dollars you may spend a day over all sessions, or none for no limit",
    "api_base": "an OpenAI-compatible endpoint URL, e.g. http://127.0.0.1:8089/v1, or none",
    "context_window": "the model's window in tokens (at least 1024), or none to use the one known for the model",
    "tool_profile": "auto, full or lean",
    "cite_numbers": "off, or remind (numbers an answer states without a [cell N, out M] citation)",
    "text_tool_calls": "true or false",
    "action_style": "auto, tools or code",
    "review_edits": "true or false (notebook edits wait on their cells for Keep / Undo)",
}


def value_hint(key: str) -> str:
    """What `key` accepts, in words (falls back to the field's type)."""
    return VALUE_HINTS.get(key) or f"a value of type {Settings.model_fields[key].annotation}"


def _is_bool_setting(key: str) -> bool:
    annotation: object = Settings.model_fields[key].annotation
    return annotation is bool or bool in get_args(annotation)


def coerce_setting(key: str, value: object, keys: tuple[str, ...] = RUNTIME_KEYS) -> object:
    """Validate one runtime value; raises InvalidInputError naming the valid keys or values."""
    if key not in keys:
        raise InvalidInputError(f"Unknown setting '{key}'. Valid settings: {', '.join(keys)}.")
    if isinstance(value, str):
        value = value.strip()
        if value.lower() in ("none", "null", ""):
            value = None
    if isinstance(value, bool) and not _is_bool_setting(key):
        raise InvalidInputError(f"Invalid value {value!r} for '{key}'. Valid values: {value_hint(key)}.")
    probe = Settings()
    try:
        setattr(probe, key, value)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise InvalidInputError(
            f"Invalid value {value!r} for '{key}': {reason}. Valid values: {value_hint(key)}."
        ) from None
    coerced = getattr(probe, key)
    if refused := load_managed().refusal(key, coerced):
        raise InvalidInputError(refused)
    return coerced


def runtime_values(settings: Settings) -> dict[str, object]:
    """The current value of every runtime setting, in RUNTIME_KEYS order."""
    return {key: getattr(settings, key) for key in RUNTIME_KEYS}
