"""Folder trust: which widening parts of a workspace's project files the user approved.

The store is `$GOAT_HOME/trusted_folders.json` (default `~/.goat/`, which the agent's tools cannot
write), keyed by the folder's resolved path; each folder lists the approved item keys
(`config/project.py`). Trust is per item: what was approved keeps applying, and anything new or
changed (a server's command, a hook, an allow rule, a wider mode) waits for the user again, while
narrowing changes (a deny rule, a removed server) need nothing. Trusting approves exactly what the
user was shown: the prompt carries a digest of the items it listed, and when the files no longer
hold those items at the click nothing is approved (the caller shows the new list).
`GOAT_TRUST_WORKSPACE=1` (or the folder's path) trusts the workspace's current files for this
process only, for scheduled runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.project import (
    Item,
    goat_home,
    items_digest,
    read_project,
    summarize_items,
    widening_items,
)
from goat_jupyter.file_lock import locked
from goat_jupyter.text import loads_json

TRUST_ENV = "GOAT_TRUST_WORKSPACE"
STORE_NAME = "trusted_folders.json"
_YES = frozenset({"1", "true", "yes", "on"})


def store_path() -> Path:
    return goat_home() / STORE_NAME


def folder_key(workspace: Path) -> str:
    return os.path.realpath(workspace)


@dataclass(frozen=True)
class Approval:
    """What may apply of one folder's project files: the approved keys, or everything (environment)."""

    keys: frozenset[str] = frozenset()
    everything: bool = False

    def covers(self, key: str) -> bool:
        return self.everything or key in self.keys


def _read_store() -> dict[str, Any]:
    try:
        data = loads_json(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = cast("dict[str, Any]", data).get("folders") if isinstance(data, dict) else None
    return cast("dict[str, Any]", folders) if isinstance(folders, dict) else {}


def _approved_keys(record: object) -> frozenset[str]:
    keys = cast("dict[str, Any]", record).get("approved") if isinstance(record, dict) else None
    items = cast("list[Any]", keys) if isinstance(keys, list) else []
    return frozenset(key for key in items if isinstance(key, str))


def trusted_by_environment(workspace: Path, environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(TRUST_ENV, "").strip()
    if value.lower() in _YES:
        return True
    return bool(value) and os.path.isabs(value) and folder_key(Path(value)) == folder_key(workspace)


def approval_for(workspace: Path, environ: Mapping[str, str] | None = None) -> Approval:
    if trusted_by_environment(workspace, environ):
        return Approval(everything=True)
    return Approval(_approved_keys(_read_store().get(folder_key(workspace))))


@dataclass(frozen=True)
class FolderState:
    """One reading of a folder's project files: every widening item, those not approved, and the
    digest a trust prompt hands back to approve exactly these."""

    items: list[Item]
    pending: list[Item]

    @property
    def digest(self) -> str:
        return items_digest(self.items)


def folder_state(workspace: Path, environ: Mapping[str, str] | None = None) -> FolderState:
    approval = approval_for(workspace, environ)
    items = project_items(workspace)
    return FolderState(items, [item for item in items if not approval.covers(item.key)])


def pending_items(workspace: Path, environ: Mapping[str, str] | None = None) -> list[Item]:
    """The widening items of the workspace's project files that are not approved."""
    return folder_state(workspace, environ).pending


def project_items(workspace: Path) -> list[Item]:
    return widening_items(read_project(workspace))


def _update(workspace: Path, keys: Iterable[str] | None, *, replace: bool) -> None:
    """Write the folder's record (None: remove it) under the store's lock, atomically."""
    path = store_path()
    with locked(path):
        folders = _read_store()
        key = folder_key(workspace)
        if keys is None:
            folders.pop(key, None)
        else:
            old: set[str] = set() if replace else set(_approved_keys(folders.get(key)))
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            folders[key] = {"approved": sorted(old | set(keys)), "updated": stamp}
        write_atomically(path, json.dumps({"version": 1, "folders": folders}, indent=2) + "\n")


def trust_folder(workspace: Path, digest: str) -> list[Item] | None:
    """Approve what the folder's files widen, if that is still what the prompt with `digest` showed
    (stale approvals go); the items approved, or None when the files changed meanwhile."""
    items = project_items(workspace)
    if items_digest(items) != digest:
        return None
    _update(workspace, [item.key for item in items], replace=True)
    return items


def approve_keys(workspace: Path, keys: Iterable[str]) -> None:
    """Add approvals (e.g. the allow rule "Always allow" just saved) and keep the others."""
    _update(workspace, keys, replace=False)


def revoke_folder(workspace: Path) -> bool:
    """Forget the folder; False when it was not trusted."""
    if folder_key(workspace) not in _read_store():
        return False
    _update(workspace, None, replace=True)
    return True


def untrusted_line(workspace: Path, items: list[Item]) -> str:
    """The one line a headless run prints about what it left out."""
    return (
        f"goat: the project settings of {workspace} are not trusted, so goat ignored their "
        f"{summarize_items(items)}. To trust them, run `%goat trust` in a cell before this one "
        f"(it shows what it trusts) or set {TRUST_ENV}=1 for this run."
    )


def trusted_folders() -> dict[str, list[str]]:
    """Every folder in the store and its approved keys (for the settings panel)."""
    return {folder: sorted(_approved_keys(record)) for folder, record in _read_store().items()}
