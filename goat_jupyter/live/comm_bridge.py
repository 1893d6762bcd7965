"""The live notebook over the `goat.notebook` comm: requests with ids, futures, timeouts, fallback."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from goat_jupyter.errors import (
    GoatError,
    InvalidInputError,
    NotAvailableError,
    ToolExecutionError,
    ToolTimeoutError,
)

COMM_TARGET = "goat.notebook"
# JupyterLab answers in 20-50 ms, or closes the comm at once without the extension; a tab whose main
# thread is busy (a long render) answers only when it is free, so the wait is long enough for that.
HELLO_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 15.0
Message = dict[str, Any]
MessageCallback = Callable[[Message], None]

# Arguments whose null is meaningful (undo resets a cell's execution count); others are left out.
NULLABLE_ARGS = frozenset({"execution_count"})


class CommHandle(Protocol):
    """The kernel end of one comm (what `comm.create_comm` returns, as far as used here)."""

    def send(self, data: Message) -> None: ...

    def close(self) -> None: ...


CommOpener = Callable[[str, MessageCallback, MessageCallback], CommHandle]


class BridgeUnavailableError(NotAvailableError):
    """No frontend answers on the comm (target missing, comm closed, or silence)."""


def open_kernel_comm(target: str, on_msg: MessageCallback, on_close: MessageCallback) -> CommHandle:
    """Open a comm from this ipykernel kernel; the comm_open carries the running cell as its parent."""
    from comm import create_comm

    handle: Any = create_comm(target_name=target)
    handle.on_msg(on_msg)
    handle.on_close(on_close)
    return cast(CommHandle, handle)


@dataclass(frozen=True)
class Hello:
    """The frontend's answer to `hello`: the notebook owning this kernel, as JupyterLab names it."""

    path: str
    server_root: str | None
    client: str
    version: str

    def owner_path(self, fallback_dir: Path) -> Path:
        """The owning notebook's absolute path: server root + path, except for a kernel outside the
        server's root (a remote kernel behind a gateway, whose disk is not the server's): there, and
        without a root, the notebook's name in the kernel's folder."""
        root = Path(self.server_root).expanduser() if self.server_root else None
        if root is not None and fallback_dir.is_relative_to(root):
            return root / self.path
        return fallback_dir / Path(self.path).name

    def relative(self, path: Path) -> str | None:
        """`path` as JupyterLab names it (relative to the server root), None when outside it."""
        if not self.server_root:
            return None
        try:
            return path.relative_to(Path(self.server_root).expanduser()).as_posix()
        except ValueError:
            return None


class CommBridge:
    """One comm to the frontend that ran the cell. Never blocks: every wait is an asyncio Future.

    Comm callbacks may run on another thread (a subshell), so replies reach their futures through
    `loop.call_soon_threadsafe`. A closed comm or an unanswered `hello` marks the bridge absent.
    """

    def __init__(
        self,
        opener: CommOpener = open_kernel_comm,
        *,
        hello_timeout: float = HELLO_TIMEOUT_S,
        request_timeout: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self._opener = opener
        self.hello_timeout = hello_timeout
        self.request_timeout = request_timeout
        self._comm: CommHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[str, asyncio.Future[Message]] = {}
        self._ids = itertools.count(1)
        self._generation = 0  # which comm is current: callbacks of a closed one are ignored
        self._lock = asyncio.Lock()
        self.state: Literal["unknown", "live", "absent"] = "unknown"
        self.hello: Hello | None = None
        self.absent_reason = ""

    async def connect(self) -> Hello | None:
        """Open the comm and say hello once; None (and `absent_reason`) when no frontend answers."""
        async with self._lock:
            if self.state == "unknown":
                await self._open()
        return self.hello

    async def request(self, op: str, **args: Any) -> Message:
        """Send `{id, op, ...args}` and return the `ok` reply; errors name the operation."""
        if await self.connect() is None:
            raise BridgeUnavailableError(f"The notebook frontend is not available: {self.absent_reason}.")
        try:
            return await self._exchange(op, args, self.request_timeout)
        except ToolTimeoutError:
            self.close()  # the page may be gone: the next request says hello on a new comm
            raise

    def close(self) -> None:
        """Close the comm; the next request opens a new one (with the then-running cell as parent)."""
        comm, self._comm = self._comm, None
        self._fail_pending("the bridge was closed")
        self.state, self.hello = "unknown", None
        if comm is not None:
            with contextlib.suppress(Exception):  # the kernel may be shutting down
                comm.close()

    async def _open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._generation += 1
        generation = self._generation
        try:
            self._comm = self._opener(
                COMM_TARGET,
                self._on_msg,  # replies carry request ids, unique across comms
                lambda msg: self._on_close(generation),
            )
        except Exception as exc:  # no kernel, or no comm manager
            self._mark_absent(f"no Jupyter kernel comm could be opened ({exc})")
            return
        try:
            reply = await self._exchange("hello", {}, self.hello_timeout)
        except ToolTimeoutError:
            self._mark_absent(f"no frontend answered within {self.hello_timeout:g} s")
            return
        except GoatError as exc:
            self._mark_absent(exc.message)
            return
        self.hello = Hello(
            path=str(reply.get("path") or ""),
            server_root=cast("str | None", reply.get("server_root")),
            client=str(reply.get("client") or "unknown"),
            version=str(reply.get("version") or "unknown"),
        )
        self.state = "live"

    async def _exchange(self, op: str, args: Mapping[str, Any], timeout: float) -> Message:
        comm, loop = self._comm, self._loop
        if comm is None or loop is None:
            raise BridgeUnavailableError(f"The notebook frontend is not available: {self.absent_reason}.")
        request_id = f"k{next(self._ids)}"
        future: asyncio.Future[Message] = loop.create_future()
        self._pending[request_id] = future
        sent = {k: v for k, v in args.items() if v is not None or k in NULLABLE_ARGS}
        comm.send({"id": request_id, "op": op, **sent})
        try:
            reply = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise ToolTimeoutError(
                f"The notebook frontend did not answer '{op}' within {timeout:g} s."
            ) from None
        finally:
            self._pending.pop(request_id, None)
        if not reply.get("ok"):
            error = str(reply.get("error") or "no reason given")
            kind = InvalidInputError if error.startswith("no cell") else ToolExecutionError
            raise kind(f"The notebook frontend refused '{op}': {error}.")
        return reply

    def _on_msg(self, msg: Message) -> None:
        data: Any = msg.get("content", {}).get("data")
        if isinstance(data, dict) and self._loop is not None:
            self._loop.call_soon_threadsafe(self._resolve, cast(Message, data))

    def _on_close(self, generation: int) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._closed_by_frontend, generation)

    def _resolve(self, data: Message) -> None:
        future = self._pending.get(str(data.get("id")))
        if future is not None and not future.done():
            future.set_result(data)

    def _closed_by_frontend(self, generation: int) -> None:
        if generation != self._generation or self._comm is None:
            return  # an old comm, or one this side closed
        self._comm = None
        reason = "the frontend closed the comm (the goat-jupyter labextension is not installed or enabled)"
        if self.state == "live":
            reason = "the frontend closed the comm"
        self._mark_absent(reason)

    def _mark_absent(self, reason: str) -> None:
        self.state, self.hello, self.absent_reason = "absent", None, reason
        self._fail_pending(reason)

    def _fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    BridgeUnavailableError(f"The notebook frontend is not available: {reason}.")
                )
