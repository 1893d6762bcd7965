"""Follow a server's tool-list changes while its connection is open.

Servers on the 2026-07-28 protocol deliver them on a `subscriptions/listen` stream; older servers
send `notifications/tools/list_changed`, which reaches the client's message handler. Either way
the connection lists its tools again and the registry is updated before the next model request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import IncomingMessage

_log = logging.getLogger(__name__)


class ToolChangeFollower:
    """The message handler for older servers, and the loop that refreshes on every change."""

    def __init__(self, refresh: Callable[[], Awaitable[None]]) -> None:
        self._refresh = refresh
        self._announced = asyncio.Event()

    async def on_message(self, message: IncomingMessage) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._announced.set()

    async def follow(self, client: Client) -> None:
        """Run until cancelled (the connection closes)."""
        from mcp.client.subscriptions import ListenNotSupportedError

        capability = client.server_capabilities.tools
        if capability is not None and capability.list_changed:
            try:
                await self._listen(client)
                return
            except ListenNotSupportedError:
                pass  # an older protocol: its notifications come through on_message
            except Exception as exc:  # the stream broke; keep serving calls, stop following
                _log.debug("MCP tool-change stream ended: %s", exc)
                return
        await self._on_notifications()

    async def _listen(self, client: Client) -> None:
        async with client.listen(tools_list_changed=True) as changes:
            async for _event in changes:
                await self._refresh()

    async def _on_notifications(self) -> None:
        while True:
            await self._announced.wait()
            self._announced.clear()
            await self._refresh()
