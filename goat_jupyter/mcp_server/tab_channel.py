"""The server's channel to the JupyterLab page: a websocket the labextension opens to /goat/mcp/tab.

The kernel reaches the tab through its `goat.notebook` comm; the server has no such comm, so the page
opens this socket and answers the same requests (`{id, op, ...}` -> `{id, ok, ...}`). A link poses as
a comm (CommHandle), so goat's CommBridge, NotebookService and LiveNotebook work over it unchanged.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from goat_jupyter.live.comm_bridge import CommHandle, Message, MessageCallback

Send = Callable[[str], None]


@dataclass
class _Listener:
    on_msg: MessageCallback
    on_close: MessageCallback


@dataclass
class TabLink:
    """One JupyterLab page connected over the websocket."""

    number: int
    send_text: Send
    listeners: dict[int, _Listener] = field(default_factory=lambda: dict[int, _Listener]())
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def deliver(self, text: str) -> None:
        """A reply from the page, given to every comm open on this link (each keeps its own ids)."""
        try:
            data: object = json.loads(text)
        except ValueError:
            return
        if isinstance(data, dict):
            for listener in list(self.listeners.values()):
                listener.on_msg({"content": {"data": cast("Message", data)}})

    def closed(self) -> None:
        for listener in list(self.listeners.values()):
            listener.on_close({})
        self.listeners.clear()

    def attach(self, on_msg: MessageCallback, on_close: MessageCallback) -> CommHandle:
        key = next(self._ids)
        self.listeners[key] = _Listener(on_msg, on_close)
        return _LinkComm(self, key)


class _LinkComm:
    """A CommBridge's comm over a link: sending writes to the page, closing only detaches."""

    def __init__(self, link: TabLink, key: int) -> None:
        self._link, self._key = link, key

    def send(self, data: Message) -> None:
        self._link.send_text(json.dumps(data))

    def close(self) -> None:
        self._link.listeners.pop(self._key, None)


class TabChannels:
    """The pages connected now; requests go to the most recent one (the one the user last opened)."""

    def __init__(self) -> None:
        self._links: list[TabLink] = []
        self._numbers = itertools.count(1)

    def connect(self, send_text: Send) -> TabLink:
        link = TabLink(next(self._numbers), send_text)
        self._links.append(link)
        return link

    def disconnect(self, link: TabLink) -> None:
        if link in self._links:
            self._links.remove(link)
        link.closed()

    @property
    def connected(self) -> bool:
        return bool(self._links)

    def open(self, target: str, on_msg: MessageCallback, on_close: MessageCallback) -> CommHandle:
        """A CommOpener: raises when no page is connected (the bridge then says so and uses files)."""
        if not self._links:
            raise ConnectionError("no JupyterLab page with goat's labextension is connected to this server")
        return self._links[-1].attach(on_msg, on_close)

    def send_all(self, data: dict[str, Any]) -> None:
        text = json.dumps(data)
        for link in self._links:
            link.send_text(text)
