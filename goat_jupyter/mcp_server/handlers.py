"""The MCP endpoints under /goat/mcp: the Streamable HTTP endpoint, the page's websocket, the status
the settings panel shows. All require the Jupyter server's auth; while serving is off they are 404."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any, cast

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket

from goat_jupyter.mcp_server.asgi import scope_of, serve
from goat_jupyter.mcp_server.gate import FLAG, gate, set_user_enabled
from goat_jupyter.mcp_server.kernel_access import ServerKernels
from goat_jupyter.mcp_server.service import OutsideCalls
from goat_jupyter.mcp_server.status import status_view
from goat_jupyter.mcp_server.tab_channel import TabChannels, TabLink

AUTH_RESOURCE = "goat"
STATE_KEY = "goat_mcp"


class McpState:
    """The server's MCP side, built on the first request while serving is on."""

    def __init__(self, root: Path, kernels: ServerKernels, approval_timeout: float | None) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        from goat_jupyter.mcp_server.app import build_server

        self.tabs = TabChannels()
        self.calls = OutsideCalls(root, kernels, self.tabs)
        self.calls.approval_timeout = approval_timeout
        self.server = build_server(self.calls)
        # Jupyter checks hosts and origins itself (allow_remote_access, allow_origin).
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.server.streamable_http_app(json_response=True, transport_security=security)
        self.manager = self.server.session_manager
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def started(self) -> None:
        if self._running is None:
            self._running = asyncio.ensure_future(self._run())
        await self._ready.wait()

    async def _run(self) -> None:
        async with self.manager.run():
            self._ready.set()
            await asyncio.Event().wait()


def _server_flag(handler: JupyterHandler) -> dict[str, Any]:
    config: Any = handler.settings.get("config", {})
    section: Any = config.get(FLAG, {}) if hasattr(config, "get") else {}
    return dict(section) if hasattr(section, "items") else {}


def _seconds(value: object) -> float | None:
    """--GoatMcp.approval_timeout=SECONDS: how long a prompt waits for the user (default 120 s)."""
    try:
        seconds = float(str(value))
    except ValueError:
        return None
    return seconds if 0 < seconds < 86_400 else None


def mcp_state(handler: JupyterHandler) -> McpState:
    """The state for this server (404 while serving is off: the endpoint does not exist then)."""
    if not gate(_server_flag(handler)).enabled:
        raise web.HTTPError(404)
    settings = handler.settings
    state = cast("McpState | None", settings.get(STATE_KEY))
    if state is None:
        root = Path(settings.get("server_root_dir") or ".").expanduser()
        kernels = ServerKernels(settings["session_manager"], settings["kernel_manager"], root)
        timeout = _seconds(_server_flag(handler).get("approval_timeout"))
        state = settings[STATE_KEY] = McpState(root, kernels, timeout)
    return state


class McpHandler(APIHandler):
    """POST/GET/DELETE /goat/mcp: the MCP Streamable HTTP endpoint."""

    auth_resource = AUTH_RESOURCE

    def check_xsrf_cookie(self) -> None:
        """Clients authenticate with the token header (no cookie, so no XSRF); a browser's cookie
        alone is refused below."""

    async def _serve(self) -> None:
        if self._cookie_only():
            raise web.HTTPError(403, "Send the Jupyter token: Authorization: token <token>.")
        state = mcp_state(self)
        await state.started()
        self._gone = asyncio.Event()
        scope = scope_of(
            self.request.method or "GET",
            "/mcp",
            self.request.query,
            list(self.request.headers.get_all()),
            self.request.remote_ip or "",
        )
        await serve(state.manager.handle_request, scope, self.request.body or b"", self, self._gone)
        if not self._finished and not self._gone.is_set():
            self.finish()

    def _cookie_only(self) -> bool:
        """A request that only a browser's login cookie authenticates (a page of another site could
        send it): refused, since this endpoint skips the XSRF check for token clients."""
        token = self.request.headers.get("Authorization") or self.get_argument("token", "")
        return not token and bool(self.identity_provider.auth_enabled)

    def on_connection_close(self) -> None:
        gone = getattr(self, "_gone", None)
        if gone is not None:
            gone.set()

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        await self._serve()


class McpStatusHandler(APIHandler):
    """GET /goat/mcp/status: whether serving is on and why, connect commands, clients and calls."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    def get(self) -> None:
        self._reply()

    @web.authenticated
    @authorized
    def put(self) -> None:
        """`{"enabled": bool}`: the user's switch in ~/.goat/settings.json (the panel's checkbox)."""
        try:
            body: Any = json.loads(self.request.body or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(cast("dict[str, Any]", body).get("enabled"), bool):
            raise web.HTTPError(400, 'Send {"enabled": true} or {"enabled": false}.')
        try:
            set_user_enabled(bool(cast("dict[str, Any]", body)["enabled"]))
        except ValueError as exc:
            raise web.HTTPError(409, str(exc)) from None
        self._reply()

    def _reply(self) -> None:
        decided = gate(_server_flag(self))
        state = cast("McpState | None", self.settings.get(STATE_KEY))
        base = f"{self.request.protocol}://{self.request.host}{self.base_url}goat/mcp"
        calls = state.calls if state and decided.enabled else None
        self.finish(status_view(decided, base, calls, self.token or "<token>"))


class TabSocketHandler(WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    """The JupyterLab page's channel: requests go out, answers come back (tab_channel.py)."""

    auth_resource = AUTH_RESOURCE

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self.current_user is None:
            raise web.HTTPError(403)
        self.state = mcp_state(self)
        await super().get(*args, **kwargs)  # pyright: ignore[reportUnknownMemberType]

    def open(self, *args: Any, **kwargs: Any) -> None:
        self.link: TabLink = self.state.tabs.connect(self._send)
        super().open(*args, **kwargs)  # pyright: ignore[reportUnknownMemberType]

    def _send(self, text: str) -> None:
        with contextlib.suppress(websocket.WebSocketClosedError):
            self.write_message(text)

    def on_message(self, message: str | bytes) -> None:
        self.link.deliver(message.decode() if isinstance(message, bytes) else message)

    def on_close(self) -> None:
        link = getattr(self, "link", None)
        if link is not None:
            self.state.tabs.disconnect(link)
        super().on_close()  # pyright: ignore[reportUnknownMemberType]


def mcp_handlers(base_url: str) -> list[tuple[str, type[Any]]]:
    base = f"{base_url.rstrip('/')}/goat/mcp"
    return [(f"{base}/status", McpStatusHandler), (f"{base}/tab", TabSocketHandler), (base, McpHandler)]
