"""Jupyter server configuration for the Galata tests (started by Playwright's webServer)."""

import hashlib
import json
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
    built = Path(__file__).resolve().parents[2] / "goat_jupyter" / "labextension"
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


def _disable_goat_extension() -> None:
    """What `jupyter labextension disable goat-jupyter` writes, in a config dir of this server only.

    The labconfig page config is read per page load from the Jupyter config path, so the page
    this server serves lists goat-jupyter in disabledExtensions and JupyterLab never activates it.
    """
    config_dir = Path(tempfile.mkdtemp(prefix="goat-disabled-config-"))
    (config_dir / "labconfig").mkdir()
    page_config = {"disabledExtensions": {"goat-jupyter": True}}
    (config_dir / "labconfig" / "page_config.json").write_text(json.dumps(page_config))
    previous = os.environ.get("JUPYTER_CONFIG_PATH")
    os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in (str(config_dir), previous) if p)


if os.environ.get("GOAT_UI_TESTS_DISABLE_GOAT") == "1":
    _disable_goat_extension()

# The settings panel's endpoints (goat_jupyter.server), writing into a temporary goat home and
# IPython folder so the tests never touch the real ~/.goat or ~/.ipython (kernels inherit both).
c.ServerApp.jpserver_extensions = {"goat_jupyter": True}
os.environ["GOAT_HOME"] = tempfile.mkdtemp(prefix="goat-ui-home-")
os.environ["IPYTHONDIR"] = tempfile.mkdtemp(prefix="goat-ui-ipython-")

# goat's MCP server (issue 37): on for this test server only, so mcp_server.spec.ts can connect a client.
c.GoatMcp.enabled = True
c.GoatMcp.approval_timeout = 90
