"""goat's user settings file as the settings panel sees it: read, validate, write (no Jupyter imports).

Only the panel's keys are replaced; everything else in `~/.goat/settings.json` is kept as it was.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config import autoload
from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.managed import load_managed
from goat_jupyter.config.overrides import overrides
from goat_jupyter.mcp_client.config import parse_server
from goat_jupyter.permissions.rules import parse_rule
from goat_jupyter.settings import PERMISSION_MODES, Settings, user_settings_path
from goat_jupyter.text import loads_json

RULE_LISTS = ("allow", "ask", "deny")
# Budgets (agent/spend.py): dollars, and prompt + answer tokens for a run; None is no limit.
BUDGET_KEYS = ("max_cost_per_run", "max_cost_per_session", "max_cost_per_user_per_day", "max_tokens_per_run")
PANEL_KEYS = (
    "model",
    "small_model",
    "permission_mode",
    "permissions",
    "mcpServers",
    "autoload",
    *BUDGET_KEYS,
)
Problem = dict[str, Any]  # {"field": "permissions.deny", "index": 0, "message": "..."}


class SettingsFileError(ValueError):
    """The file exists but is not a JSON object: the panel will not overwrite what it cannot read."""


def read_file(path: Path | None = None) -> dict[str, Any]:
    path = path or user_settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = loads_json(text or "{}")
    except ValueError as exc:
        raise SettingsFileError(f"{path} is not valid JSON ({exc}); fix or remove it first.") from None
    if not isinstance(data, dict):
        raise SettingsFileError(f"{path} does not hold a JSON object; fix or remove it first.")
    return cast("dict[str, Any]", data)


def panel_view(path: Path | None = None, workspace: Path | None = None) -> dict[str, Any]:
    """What the panel shows: the panel's keys with defaults filled in (never a key value), the
    effective defaults, and the settings a project file in `workspace` or the environment overrides."""
    data = read_file(path)
    block = data.get("permissions")
    rules = cast("dict[str, Any]", block) if isinstance(block, dict) else {}
    return {
        "model": data.get("model") or "",
        "small_model": data.get("small_model") or "",
        "permission_mode": data.get("permission_mode") or rules.get("defaultMode") or "default",
        "permissions": {name: _strings(rules.get(name)) for name in RULE_LISTS},
        "mcpServers": data.get("mcpServers") if isinstance(data.get("mcpServers"), dict) else {},
        "budgets": {key: data.get(key) for key in BUDGET_KEYS},
        "autoload": autoload.is_enabled(),
        "path": str(path or user_settings_path()),
        "defaults": {"model": Settings().model},
        "overrides": [{"key": o.key, "value": o.value, "by": o.by} for o in overrides(workspace)],
        "managed": managed_fields(),
    }


def managed_fields() -> dict[str, dict[str, Any]]:
    """The panel's fields the managed policy sets (locked) or bounds, each with the reason in words."""
    policy = load_managed()
    fields: dict[str, dict[str, Any]] = {}
    for key in ("model", "small_model", "permission_mode", "mcpServers"):
        if key in policy.forced:
            fields[key] = {"locked": True, "reason": f"Set to {policy.forced[key]!r} by {policy.reason}."}
    if (models := policy.allowed_models) is not None:
        for key in ("model", "small_model"):
            fields.setdefault(
                key, {"locked": False, "reason": f"{policy.reason} allows: {', '.join(models)}."}
            )
    if (top := policy.max_mode) is not None:
        fields.setdefault("permission_mode", {"locked": False, "reason": f"At most {top} ({policy.reason})."})
    if rules := policy.rules("deny") + policy.rules("ask"):
        fields["permissions"] = {"locked": False, "reason": f"Added by {policy.reason}: {', '.join(rules)}."}
    return fields


def _strings(value: object) -> list[str]:
    return (
        [item for item in cast("list[Any]", value) if isinstance(item, str)]
        if isinstance(value, list)
        else []
    )


def validate(update: Mapping[str, Any]) -> list[Problem]:
    """Every problem in a PUT body, each naming its field (and index), so the panel can show it."""
    problems: list[Problem] = []
    for key in update:
        if key not in PANEL_KEYS:
            problems.append({"field": key, "message": f"Unknown setting {key!r}."})
    problems.extend(_model_problems(update))
    mode = update.get("permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        problems.append({"field": "permission_mode", "message": "Use one of " + ", ".join(PERMISSION_MODES)})
    if "permissions" in update:
        problems.extend(_rule_problems(update["permissions"]))
    if "mcpServers" in update:
        problems.extend(_server_problems(update["mcpServers"]))
    if "autoload" in update and not isinstance(update["autoload"], bool):
        problems.append({"field": "autoload", "message": "Use true or false."})
    problems.extend(_budget_problems(update))
    return problems or list(_managed_problems(update))


def _budget_problems(update: Mapping[str, Any]) -> Iterator[Problem]:
    for key in BUDGET_KEYS:
        value = update.get(key)
        if value is None:
            continue
        tokens = key == "max_tokens_per_run"
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not number or value < (1 if tokens else 0) or (tokens and not float(value).is_integer()):
            what = "a whole number of tokens, at least 1" if tokens else "a number of dollars, 0 or more"
            yield {"field": key, "message": f"Use {what}, or leave it empty for no limit."}


def _managed_problems(update: Mapping[str, Any]) -> Iterator[Problem]:
    """What goes beyond the managed policy is refused here too (the kernel would ignore it)."""
    policy = load_managed()
    for key in ("model", "small_model", "permission_mode"):
        value = update.get(key)
        if value not in (None, "") and (refused := policy.refusal(key, value)):
            yield {"field": key, "message": refused}
    for key in set(BUDGET_KEYS) & set(update):  # a ceiling: no more, and never "no limit"
        if refused := policy.refusal(key, update[key]):
            yield {"field": key, "message": refused}
    servers = update.get("mcpServers")
    for name in cast("dict[str, Any]", servers) if isinstance(servers, dict) else {}:
        if not policy.server_allowed(name):
            yield {
                "field": "mcpServers",
                "message": f"MCP server '{name}' is not allowed by {policy.reason}.",
            }


def _model_problems(update: Mapping[str, Any]) -> Iterator[Problem]:
    for key in ("model", "small_model"):
        if key not in update:
            continue
        value = update[key]
        if value in (None, ""):
            continue  # empty: the default model (the key is removed from the file)
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            yield {"field": key, "message": "A model name, e.g. gpt-4o-mini or anthropic/claude-sonnet-4-5."}
        elif any(ch.isspace() for ch in value.strip()):
            yield {"field": key, "message": "A model name has no spaces."}


def _rule_problems(block: object) -> Iterator[Problem]:
    if not isinstance(block, dict):
        yield {"field": "permissions", "message": "An object with allow, ask and deny lists."}
        return
    for name, rules in cast("dict[str, Any]", block).items():
        if name not in RULE_LISTS or not isinstance(rules, list):
            yield {"field": f"permissions.{name}", "message": "allow, ask and deny are lists of rules."}
            continue
        for index, rule in enumerate(cast("list[Any]", rules)):
            message = _rule_problem(rule)
            if message:
                yield {"field": f"permissions.{name}", "index": index, "rule": rule, "message": message}


def _rule_problem(rule: object) -> str | None:
    if not isinstance(rule, str):
        return "A rule is a string such as Bash(git diff:*) or Read(./secrets/**)."
    try:
        parse_rule(rule)
    except ValueError as exc:
        return str(exc)
    return None


class _AnyVariable(Mapping[str, str]):
    """Every ${VAR} counts as set: variables are the kernel's business, the shape is checked here."""

    def __getitem__(self, key: str) -> str:
        return "set"

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _server_problems(servers: object) -> Iterator[Problem]:
    if not isinstance(servers, dict):
        yield {"field": "mcpServers", "message": "An object: server name -> configuration."}
        return
    for name, raw in cast("dict[str, Any]", servers).items():
        try:
            parse_server(raw, _AnyVariable())
        except ValueError as exc:
            yield {"field": "mcpServers", "server": name, "message": str(exc)}


def write(
    update: Mapping[str, Any], path: Path | None = None, workspace: Path | None = None
) -> dict[str, Any]:
    """Apply a validated update; returns the new panel view."""
    path = path or user_settings_path()
    data = read_file(path)
    for key in ("model", "small_model", "permission_mode", "mcpServers", *BUDGET_KEYS):
        if key in update and update[key] in (None, ""):
            data.pop(key, None)
        elif key in update:
            data[key] = update[key].strip() if isinstance(update[key], str) else update[key]
    if "permissions" in update:
        block = data.get("permissions")
        rules: dict[str, Any] = dict(cast("dict[str, Any]", block)) if isinstance(block, dict) else {}
        rules.update(update["permissions"])
        data["permissions"] = rules
    if "autoload" in update:
        (autoload.enable if update["autoload"] else autoload.disable)()
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return panel_view(path, workspace)
