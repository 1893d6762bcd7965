"""REST handlers under /goat/: settings, keys (names only), model catalogue, MCP connection test.

Every handler requires jupyter_server's authentication (token or login) and authorization."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

import goat_jupyter.server.trust_view as trust_view
import goat_jupyter.server.user_settings as user_settings
from goat_jupyter.config.keys import apply_keys, key_store_path, launch_env_changes, read_keys, update_keys
from goat_jupyter.server.catalogue import catalogue
from goat_jupyter.server.kernel_launch import refresh_launch_envs
from goat_jupyter.server.mcp_check import check_connection

AUTH_RESOURCE = "goat"


MAX_DEPTH = 32  # the panel's settings nest 4 deep; deeper input only makes later steps recurse


class BodyError(ValueError):
    """A request body the endpoints cannot take: the reply is HTTP 400 with this text."""


def parse_body(raw: bytes) -> dict[str, Any]:
    """A JSON object at most MAX_DEPTH deep whose text is valid Unicode, else BodyError."""
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise BodyError(f"The request body nests deeper than {MAX_DEPTH} levels.") from None
    except ValueError as exc:
        raise BodyError(f"The request body is not JSON ({exc}).") from None
    if not isinstance(data, dict):
        raise BodyError("The request body must be a JSON object.")
    body = cast("dict[str, Any]", data)
    _check_shape(body)
    return body


def _check_shape(data: object) -> None:
    """Depth and text of a parsed body, without recursion (a deep body must not overflow the stack)."""
    level: list[object] = [data]
    for depth in range(MAX_DEPTH + 1):
        below: list[object] = []
        for value in level:
            if isinstance(value, str) and not _encodable(value):
                raise BodyError("The request body holds text that is not valid Unicode (a lone surrogate).")
            if isinstance(value, dict):
                items = cast("dict[str, object]", value)
                below.extend([*items.keys(), *items.values()])
            elif isinstance(value, list):
                below.extend(cast("list[object]", value))
        if not below:
            return
        if depth == MAX_DEPTH:
            raise BodyError(f"The request body nests deeper than {MAX_DEPTH} levels.")
        level = below


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class GoatHandler(APIHandler):
    auth_resource = AUTH_RESOURCE

    def body(self) -> dict[str, Any]:
        try:
            return parse_body(self.request.body or b"{}")
        except BodyError as exc:
            raise web.HTTPError(400, str(exc)) from None

    def root(self) -> Path:
        """The server's root folder: the project whose files may override the panel's settings."""
        return Path(self.settings.get("server_root_dir") or ".").expanduser()

    def reply(self, payload: object, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(payload))


class SettingsHandler(GoatHandler):
    @web.authenticated
    @authorized
    def get(self) -> None:
        try:
            self.reply(user_settings.panel_view(workspace=self.root()))
        except user_settings.SettingsFileError as exc:
            self.reply({"errors": [{"field": "file", "message": str(exc)}]}, 409)

    @web.authenticated
    @authorized
    def put(self) -> None:
        update = self.body()
        problems = user_settings.validate(update)
        if problems:
            self.reply({"errors": problems}, 400)
            return
        try:
            self.reply(user_settings.write(update, workspace=self.root()))
        except user_settings.SettingsFileError as exc:
            self.reply({"errors": [{"field": "file", "message": str(exc)}]}, 409)


def key_listing() -> dict[str, Any]:
    """Names of stored keys and where each is set; never a value."""
    stored = read_keys()
    return {
        "path": str(key_store_path()),
        "keys": [{"name": name, "stored": True} for name in sorted(stored)],
    }


class KeysHandler(GoatHandler):
    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(key_listing())

    @web.authenticated
    @authorized
    def put(self) -> None:
        """`{"set": {"NAME": "value"}, "remove": ["NAME"]}`: kernels started or restarted afterwards
        see the store as it is; running ones at their next `%goat` command."""
        body = self.body()
        to_set = body.get("set", {})
        to_remove = body.get("remove", [])
        if not isinstance(to_set, dict) or not isinstance(to_remove, list):
            raise web.HTTPError(400, '"set" must be an object and "remove" a list.')
        changes: dict[str, str | None] = {str(name): None for name in cast("list[Any]", to_remove)}
        for name, value in cast("dict[str, Any]", to_set).items():
            if not isinstance(value, str):
                self.reply({"errors": [{"field": name, "message": "A key's value is a string."}]}, 400)
                return
            changes[name] = value
        before = read_keys()
        try:
            after = update_keys(changes)
        except ValueError as exc:
            self.reply({"errors": [{"field": "keys", "message": str(exc)}]}, 400)
            return
        apply_keys(override=True)  # this server's environment, inherited by kernels it starts
        refresh_launch_envs(self.kernel_manager, *launch_env_changes(before, after))
        self.reply(key_listing())


class ModelsHandler(GoatHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await asyncio.to_thread(catalogue))


class McpTestHandler(GoatHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.body()
        self.reply(await check_connection(str(body.get("name") or "test"), body.get("server"), self.root()))


class TrustHandler(GoatHandler):
    """GET ?folder=: the folder's project settings; POST {"folder", "digest"}: trust what GET showed
    (409 with the new view when the files changed); DELETE ?folder=: revoke."""

    def root(self) -> Path:
        return Path(self.settings.get("server_root_dir") or ".").expanduser()

    def _answer(self, action: Callable[[], dict[str, Any]]) -> None:
        try:
            self.reply(action())
        except trust_view.FolderError as exc:
            self.reply({"errors": [{"field": "folder", "message": str(exc)}]}, 400)
        except trust_view.ChangedError as exc:
            self.reply({**exc.view, "errors": [{"field": "digest", "message": str(exc)}]}, 409)

    @web.authenticated
    @authorized
    def get(self) -> None:
        name = self.get_argument("folder", "")
        self._answer(lambda: trust_view.folder_view(trust_view.resolve_folder(self.root(), name)))

    @web.authenticated
    @authorized
    def post(self) -> None:
        body = self.body()
        name = body.get("folder", "")
        self._answer(
            lambda: trust_view.trust(trust_view.resolve_folder(self.root(), name), body.get("digest"))
        )

    @web.authenticated
    @authorized
    def delete(self) -> None:
        name = self.get_argument("folder", "")
        self._answer(lambda: trust_view.revoke_listed(self.root(), name))


def handlers(base_url: str) -> list[tuple[str, type[GoatHandler]]]:
    routes = {
        "settings": SettingsHandler,
        "keys": KeysHandler,
        "models": ModelsHandler,
        "mcp/test": McpTestHandler,
        "trust": TrustHandler,
    }
    return [(f"{base_url.rstrip('/')}/goat/{path}", handler) for path, handler in routes.items()]
