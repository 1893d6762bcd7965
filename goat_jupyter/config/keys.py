"""Provider keys stored by the settings panel in `~/.goat/keys.json` (mode 0600, user only).

The server extension puts them into its own environment and into the launch environment of the
kernels it runs, so kernels started or restarted afterwards have them; a running kernel follows the
store at its next `%goat` command (a key removed in the panel leaves it, a new one arrives; a value set
elsewhere wins until `%goat config reload`). Values never leave this module except into an
environment. The agent's tools cannot write this file: it lives under ~/.goat/,
which the permission engine protects."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.files import write_atomically
from goat_jupyter.text import loads_json

KEYS_FILE = "keys.json"
FILE_MODE = 0o600
_NAME = re.compile(r"^[A-Z][A-Z0-9_]{1,63}$")
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "API_BASE", "BASE_URL", "API_VERSION", "REGION", "PROJECT", "ORG")
# Variables that change how programs run must never come from here, whatever their name.
_FORBIDDEN_PREFIXES = ("LD_", "PYTHON", "GOAT_", "JUPYTER", "JPY_", "IPYTHON", "PATH", "HOME", "SHELL")

# What this process took from the store (or got with the store's value from the process that started
# it), so a key removed in the panel leaves this process too.
_applied: dict[str, str] = {}
_synced: tuple[object, ...] | None = None  # the store's stamp at the last `sync_keys`


def goat_home() -> Path:
    return Path(os.environ.get("GOAT_HOME", Path.home() / ".goat"))


def key_store_path() -> Path:
    return goat_home() / KEYS_FILE


def check_name(name: str) -> str | None:
    """Why `name` cannot be stored, or None when it can."""
    if not _NAME.match(name):
        return f"{name!r} is not an environment variable name (A-Z, 0-9 and _, starting with a letter)."
    if name.startswith(_FORBIDDEN_PREFIXES) or not any(word in name for word in _SECRET_WORDS):
        return f"{name!r} does not look like a provider key or endpoint (e.g. OPENAI_API_KEY)."
    return None


def check_value(name: str, value: str) -> str | None:
    if not value.strip() or any(ch in value for ch in "\x00\r\n"):
        return f"The value for {name} must be one non-empty line."
    return None


def read_keys(path: Path | None = None) -> dict[str, str]:
    """The stored keys; {} when the file is missing or broken (entries with bad names are dropped)."""
    try:
        data = loads_json((path or key_store_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    items = cast("dict[Any, Any]", data).items()
    return {k: v for k, v in items if isinstance(k, str) and isinstance(v, str) and check_name(k) is None}


def write_keys(keys: Mapping[str, str], path: Path | None = None) -> Path:
    """Replace the store atomically; the file is 0600 from its first byte, never wider."""
    path = path or key_store_path()
    write_atomically(path, json.dumps(dict(sorted(keys.items())), indent=2), FILE_MODE)
    return path


def update_keys(changes: Mapping[str, str | None], path: Path | None = None) -> dict[str, str]:
    """Set (a value) or remove (None or "") keys; raises ValueError naming the first bad entry."""
    for name, value in changes.items():
        problem = check_name(name) or (check_value(name, value) if value else None)
        if problem:
            raise ValueError(problem)
    keys = read_keys(path)
    for name, value in changes.items():
        if value:
            keys[name] = value.strip()
        else:
            keys.pop(name, None)
    write_keys(keys, path)
    return keys


def apply_keys(
    environ: MutableMapping[str, str] | None = None, *, override: bool, path: Path | None = None
) -> list[str]:
    """Put the stored keys into `environ`; with `override`, also replace values set elsewhere and
    drop keys this process took from the store earlier that are no longer stored. Returns names set."""
    env = os.environ if environ is None else environ
    keys = read_keys(path)
    for name, old in list(_applied.items()):
        if name not in keys and env.get(name) == old:
            del env[name]
            del _applied[name]
    applied: list[str] = []
    for name, value in keys.items():
        if override or env.get(name) in (None, value, _applied.get(name)):
            env[name] = value
            _applied[name] = value
            applied.append(name)
    return applied


def store_stamp(path: Path) -> tuple[object, ...]:
    """Changes whenever the store is written (it is replaced atomically: a new inode)."""
    try:
        info = os.stat(path)
    except OSError:
        return (str(path),)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)


def sync_keys(environ: MutableMapping[str, str] | None = None, path: Path | None = None) -> None:
    """Follow the store in this process (`apply_keys` without override); one stat when it is unchanged."""
    global _synced
    store = path or key_store_path()
    stamp = store_stamp(store)
    if stamp != _synced:
        apply_keys(environ, override=False, path=store)
        _synced = stamp


def launch_env_changes(
    before: Mapping[str, str], after: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> value to set, name -> stored value that was removed) between two readings of the store."""
    added = {name: value for name, value in after.items() if before.get(name) != value}
    removed = {name: value for name, value in before.items() if name not in after}
    return added, removed


def update_launch_env(
    env: MutableMapping[str, str], added: Mapping[str, str], removed: Mapping[str, str]
) -> None:
    """A kernel's launch environment (what a restart reuses) after a store change: a removed key leaves
    it when it still holds the stored value; new and changed keys come in."""
    for name, old in removed.items():
        if env.get(name) == old:
            del env[name]
    env.update(added)
