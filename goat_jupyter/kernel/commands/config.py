"""`%goat autoload on|off` and `%goat config reload`: configuration commands run in the kernel."""

from __future__ import annotations

from goat_jupyter.config import autoload
from goat_jupyter.config.keys import apply_keys, key_store_path
from goat_jupyter.config.managed import load_managed
from goat_jupyter.config.overrides import overrides
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.permissions.engine import invalid_rules
from goat_jupyter.ui.summary import relative


def autoload_command(goat: GoatRuntime, args: list[str]) -> None:
    print(autoload.command(args))


def reload_config(goat: GoatRuntime) -> None:
    """Read the settings files and the key store again (the panel's changes, for a running kernel)."""
    names = apply_keys(override=True)
    servers = goat.reload_settings()
    keys = ", ".join(names) or "none"
    print(
        f"Reloaded the settings: model {goat.session.settings.model}, "
        f"mode {goat.session.settings.permission_mode}. "
        f"Keys from {relative(str(key_store_path()), str(goat.workspace))}: {keys}. "
        f"{servers.text()}"
    )
    for note in goat.session.settings.managed_notes:
        print(f"Refused: {note}")
    print_overrides(goat)


def print_overrides(goat: GoatRuntime) -> None:
    """Say which settings in use come from the environment or a project file, not the panel."""
    settings = goat.session.settings
    for item in overrides(goat.workspace):
        if str(getattr(settings, item.key)) == item.value:  # `%goat config key=...` has the last word
            print(f"note: {item.text()}")


def managed_status(notes: list[str]) -> str:
    """What the managed policy sets, one line each, and what it refused of the settings files."""
    policy = load_managed()
    if not policy.active:
        return "managed: none"
    lines = [f"managed by {policy.reason}:", *(f"  {line}" for line in policy.describe())]
    lines += [f"  refused: {note}" for note in notes]
    return "\n".join(lines)


def allow_command(goat: GoatRuntime, rules: list[str]) -> None:
    """`%goat allow RULE ...`: allow matching calls for this session, as "Allow for session" does."""
    saved = goat.session.session_rules
    if not rules:
        print(f"Allowed for this session: {', '.join(saved) or 'nothing yet'}")
        return
    if problems := invalid_rules(rules):
        print("Nothing was allowed: " + "; ".join(problems))
        return
    saved.extend(rule for rule in dict.fromkeys(rules) if rule not in saved)
    print(
        f"Allowed for this session: {', '.join(rules)}. Deny and ask rules, protected files and "
        "managed settings still apply; %goat reset or a kernel restart ends it."
    )
