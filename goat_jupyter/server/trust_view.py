"""Folder trust for the settings panel: a folder's project settings (trusted or not), trust, revoke.

Folders are named relative to the Jupyter root (or as an absolute path inside it, as the list of
trusted folders shows them); anything outside the root, or not a folder, is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from goat_jupyter.config.trust import (
    folder_key,
    folder_state,
    revoke_folder,
    trust_folder,
    trusted_folders,
)


class FolderError(ValueError):
    """The named folder cannot be used (outside the Jupyter root, or missing)."""


class ChangedError(ValueError):
    """The folder's project settings are not what the panel showed: nothing was trusted."""

    def __init__(self, view: dict[str, Any]) -> None:
        super().__init__(
            "The folder's project settings changed since they were shown (or were never shown): "
            "nothing was trusted. Look at the list again, then trust."
        )
        self.view = view


def resolve_folder(root: Path, name: object) -> Path:
    """The folder `name` names under `root`, resolved; FolderError when outside it or missing."""
    if not isinstance(name, str):
        raise FolderError("The folder must be given as a string.")
    base = Path(folder_key(root))
    folder = Path(folder_key(base / name))
    if folder != base and base not in folder.parents:
        raise FolderError(f"{name!r} is outside the Jupyter root folder {base}.")
    if not folder.is_dir():
        raise FolderError(f"{folder} is not a folder.")
    return folder


def folder_view(folder: Path) -> dict[str, Any]:
    """What the folder's project files would widen, each item marked trusted or not, the digest a
    trust request must send back (it approves exactly these), and the store."""
    state = folder_state(folder, environ={})
    pending = {item.key for item in state.pending}
    items = [
        {"kind": item.kind, "source": item.source, "text": item.text, "trusted": item.key not in pending}
        for item in state.items
    ]
    return {
        "folder": str(folder),
        "items": items,
        "digest": state.digest,
        "trusted_folders": sorted(trusted_folders()),
    }


def trust(folder: Path, digest: object) -> dict[str, Any]:
    """Trust what the panel showed (`digest` from its view); ChangedError, with the new view, if not."""
    if not isinstance(digest, str) or trust_folder(folder, digest) is None:
        raise ChangedError(folder_view(folder))
    return folder_view(folder)


def revoke(folder: Path) -> dict[str, Any]:
    revoke_folder(folder)
    return folder_view(folder)


def revoke_listed(root: Path, name: object) -> dict[str, Any]:
    """Revoke a folder of the list by its absolute path, even one that no longer exists."""
    if isinstance(name, str) and os.path.isabs(name) and name in trusted_folders():
        revoke_folder(Path(name))
        return folder_view(Path(folder_key(root)))
    return revoke(resolve_folder(root, name))
