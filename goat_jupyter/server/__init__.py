"""The jupyter_server extension behind the settings panel (enabled by
jupyter-config/jupyter_server_config.d/goat_jupyter.json, which the wheel installs into etc/jupyter)."""

from __future__ import annotations

from typing import Any

from goat_jupyter.config.keys import apply_keys


def _load_jupyter_server_extension(serverapp: Any) -> None:  # pyright: ignore[reportUnusedFunction]
    from goat_jupyter.mcp_server.handlers import mcp_handlers
    from goat_jupyter.server.handlers import handlers
    from goat_jupyter.server.kernel_launch import harden_kernel_specs

    apply_keys(override=False)  # kernels this server starts inherit the stored keys
    harden_kernel_specs(serverapp.kernel_spec_manager)  # ... and skip modules planted in their folder
    web_app = serverapp.web_app
    web_app.add_handlers(".*$", handlers(web_app.settings["base_url"]))
    web_app.add_handlers(".*$", mcp_handlers(web_app.settings["base_url"]))  # 404 until turned on
    serverapp.log.info("goat_jupyter: settings endpoints under %sgoat/", web_app.settings["base_url"])
