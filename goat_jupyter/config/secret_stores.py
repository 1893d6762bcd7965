"""Credential stores: files and folders that hold keys, tokens or passwords (ssh keys, cloud
credentials, goat's key store, kernel connection files). The agent reads them only when the user
says so, every time (permissions/secrets.py), searches leave them out, and RunCode's sandbox hides
them (processes/sandbox.py).
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from goat_jupyter.config.keys import key_store_path

RESOLVE_EVERY_S = 10
# Below the home folder: path -> what it holds.
HOME_STORES: dict[str, str] = {
    ".ssh": "ssh keys",
    ".gnupg": "GnuPG keys",
    ".aws": "AWS credentials",
    ".azure": "Azure credentials",
    ".config/gcloud": "Google Cloud credentials",
    ".kube/config": "Kubernetes credentials",
    ".docker/config.json": "Docker registry credentials",
    ".netrc": "saved logins (netrc)",
    "_netrc": "saved logins (netrc)",
    ".git-credentials": "git's saved passwords",
    ".config/git/credentials": "git's saved passwords",
    ".config/gh/hosts.yml": "GitHub CLI tokens",
    ".pypirc": "package index passwords",
    ".npmrc": "npm tokens",
    ".yarnrc.yml": "yarn tokens",
    ".cargo/credentials": "Cargo registry tokens",
    ".cargo/credentials.toml": "Cargo registry tokens",
    ".gem/credentials": "RubyGems tokens",
    ".pgpass": "PostgreSQL passwords",
    ".my.cnf": "MySQL passwords",
    ".s3cfg": "S3 credentials",
    ".boto": "cloud storage credentials",
    ".cache/huggingface/token": "a Hugging Face token",
    ".huggingface/token": "a Hugging Face token",
    ".terraform.d/credentials.tfrc.json": "Terraform tokens",
    ".vault-token": "a Vault token",
    ".password-store": "saved passwords (pass)",
    ".local/share/keyrings": "the desktop keyring",
}


def stores(home: Path | None = None) -> list[tuple[Path, str]]:
    """Every credential store's path (it need not exist) with what it holds."""
    home = home or Path.home()
    places = tuple(os.environ.get(name) for name in _PLACES_FROM)
    return list(_stores(home, places))


_PLACES_FROM = ("HOME", "GOAT_HOME", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "XDG_DATA_HOME")


@functools.lru_cache(maxsize=8)
def _stores(home: Path, _places: tuple[str | None, ...]) -> tuple[tuple[Path, str], ...]:
    found = [(home / rel, label) for rel, label in HOME_STORES.items()]
    found.append((key_store_path(), "goat's provider keys"))
    found.append((home / ".goat" / "keys.json", "goat's provider keys"))
    found.append((runtime_dir(), "Jupyter's runtime files (kernel connection keys, server tokens)"))
    return tuple(found)


def runtime_dir() -> Path:
    """Jupyter's runtime folder, as Jupyter finds it (kernel connection files live there)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


class Stores:
    """The credential stores of one home folder, resolved once, to check many paths against
    (folders' resolved forms are remembered: a search's results share few folders)."""

    def __init__(self, home: Path | None = None) -> None:
        listed = tuple(stores(home))
        self.labels = _labels(listed, int(time.monotonic() // RESOLVE_EVERY_S))
        self._below = tuple(form + "/" for form in self.labels)
        self._real_folders: dict[str, str] = {}

    def find(self, path: Path, real: Path | None = None) -> tuple[Path, str] | None:
        """The store `path` is or lies in (as written or with symlinks resolved: `real` when the
        caller has it), or None."""
        for form in (_key(path), _key(real) if real is not None else self._real(path)):
            if form in self.labels or form.startswith(self._below):
                return self._label(form)
        return None

    def inside(self, folder: Path) -> tuple[Path, str] | None:
        """A store that lies inside `folder` (a folder moved or deleted as a whole), or None."""
        for form in (_key(folder), _key(Path(os.path.realpath(folder)))):
            prefix = form.rstrip("/") + "/"
            for store_form, found in self.labels.items():
                if store_form.startswith(prefix):
                    return found
        return None

    def _label(self, form: str) -> tuple[Path, str]:
        return next(v for k, v in self.labels.items() if form == k or form.startswith(k + "/"))

    def _real(self, path: Path) -> str:
        if os.path.islink(path):
            return _key(Path(os.path.realpath(path)))
        folder, name = os.path.split(os.path.normpath(path))
        real = self._real_folders.get(folder)
        if real is None:
            real = self._real_folders[folder] = _key(Path(os.path.realpath(folder)))
        return f"{real.rstrip('/')}/{name.casefold()}"


@functools.lru_cache(maxsize=8)
def _labels(listed: tuple[tuple[Path, str], ...], _period: int) -> dict[str, tuple[Path, str]]:
    """Each store's path as written and resolved (symlinks are looked at again every few seconds)."""
    labels: dict[str, tuple[Path, str]] = {}
    for store, label in listed:
        for form in (_key(store), _key(Path(os.path.realpath(store)))):
            labels.setdefault(form, (store, label))
    return labels


def store_of(path: Path, home: Path | None = None) -> tuple[Path, str] | None:
    """The credential store `path` is or lies in, or None."""
    return Stores(home).find(path)


def _key(path: Path) -> str:
    return os.path.normpath(path).casefold().rstrip("/") or "/"
