"""Jupyter server configuration for the Galata tests (started by Playwright's webServer)."""

import hashlib
import os
import tempfile
from pathlib import Path

import jupyterlab.galata
from jupyterlab.galata import configure_jupyter_server

c = get_config()  # type: ignore[name-defined]  # noqa: F821  (injected by Jupyter)
configure_jupyter_server(c)

c.ServerApp.allow_root = True
c.ServerApp.port = int(os.environ.get("GOAT_UI_TESTS_PORT", "8888"))


def _freshly_built_extension_dir() -> list[str]:
    """A labextensions dir holding goat-jupyter -> goat_jupyter/labextension of this checkout.

    Extra labextension paths win over installed ones, so the tests always load the extension
    built from this working tree, whatever copy pip installed earlier.
    """
    built = Path(__file__).resolve().parent.parent / "goat_jupyter" / "labextension"
    if not (built / "package.json").exists():
        return []
    checkout = hashlib.sha1(str(built).encode()).hexdigest()[:12]
    link_dir = Path(tempfile.gettempdir()) / f"goat-labextensions-{checkout}"
    link_dir.mkdir(exist_ok=True)
    link = link_dir / "goat-jupyter"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(built, target_is_directory=True)
    return [str(link_dir)]


c.LabServerApp.extra_labextensions_path = [
    str(Path(jupyterlab.galata.__file__).parent),
    *_freshly_built_extension_dir(),
]
