"""Every path an outside agent names is confined to the Jupyter server's root, where it enters."""

from __future__ import annotations

import os
from pathlib import Path

from goat_jupyter.errors import InvalidPathError


def confined(root: Path, raw: str, *, suffix: str | None = ".ipynb") -> Path:
    """`raw` (relative to the root, or absolute inside it) with links resolved; an error otherwise."""
    if not raw.strip() or "\x00" in raw:
        raise InvalidPathError("Give a notebook path relative to the Jupyter server's root.")
    base = Path(os.path.realpath(root))
    joined = Path(os.path.expanduser(raw)) if os.path.isabs(os.path.expanduser(raw)) else base / raw
    resolved = Path(os.path.realpath(joined))
    if not resolved.is_relative_to(base):
        raise InvalidPathError(
            f"{raw!r} is outside the Jupyter server's root ({base}); only notebooks under it can be used."
        )
    if suffix is not None and resolved.suffix.lower() != suffix:
        raise InvalidPathError(f"{raw!r} is not a {suffix} notebook.")
    return resolved


def relative(root: Path, path: Path) -> str:
    """How JupyterLab names `path`: relative to the root, with forward slashes."""
    return path.relative_to(Path(os.path.realpath(root))).as_posix()
