"""A real IPython kernel driven through jupyter_client, with the test acting as the frontend."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

Message = dict[str, Any]
REPO_ROOT = Path(__file__).resolve().parent.parent
CommHandler = Callable[["KernelSession", Message], None]


@dataclass
class CellResult:
    """Everything a cell published on iopub, in order."""

    status: str
    messages: list[Message] = field(default_factory=lambda: list[Message]())
    elapsed_s: float = 0.0
    execution_count: int | None = None  # from the execute_reply, as JupyterLab shows it

    def of_type(self, *kinds: str) -> list[Message]:
        return [m for m in self.messages if m["header"]["msg_type"] in kinds]

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream"))

    @property
    def error(self) -> Message | None:
        errors = self.of_type("error")
        return errors[0] if errors else None

    def final_displays(self) -> dict[str, dict[str, Any]]:
        """display_id -> last data published for it (display then updates)."""
        shown: dict[str, dict[str, Any]] = {}
        for msg in self.of_type("display_data", "update_display_data", "execute_result"):
            display_id = msg["content"].get("transient", {}).get("display_id") or msg["header"]["msg_id"]
            shown[display_id] = msg["content"]["data"]
        return shown

    def text(self, mime: str = "text/plain") -> str:
        """All final display text for a mime type plus stdout, joined."""
        parts = [data.get(mime, "") for data in self.final_displays().values()]
        return "\n".join(parts) + "\n" + self.stdout


class KernelSession:
    """Start a kernel in `cwd` with `env`; run cells; answer comm messages like a frontend."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        # The kernel imports goat_jupyter from this checkout even when it is not pip-installed.
        self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), self.env.get("PYTHONPATH")]))
        self.km = AsyncKernelManager(kernel_name="python3")
        self.comm_handlers: dict[str, CommHandler] = {}
        self.comm_log: list[Message] = []
        self._comm_targets: dict[str, str] = {}  # comm id -> target name, from comm_open
        self.iopub_log: list[Message] = []  # every iopub message execute() read, any parent
        self._unacknowledged: dict[str, str] = {}  # widget comm id -> its pending update's msg id

    async def __aenter__(self) -> KernelSession:
        self.km.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]  # pyright: ignore[reportAttributeAccessIssue]
        await self.km.start_kernel(cwd=str(self.cwd), env=self.env)
        self.client = self.km.client()
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=60)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.client.stop_channels()
        await self.km.shutdown_kernel(now=True)

    async def execute(
        self,
        code: str,
        *,
        timeout: float = 60,
        on_message: Callable[[Message], None] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> CellResult:
        """Run a cell and collect its iopub messages until the kernel is idle for it.

        `metadata` goes into the execute_request as JupyterLab's does (e.g. `{"cellId": ...}`).
        """
        started = time.perf_counter()
        msg_id = self._send_execute(code, metadata)
        result = CellResult(status="unknown")
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"cell did not finish in {timeout}s: {code[:80]!r}\n{result.stdout}")
            msg = await self.client.get_iopub_msg(timeout=remaining)
            self.iopub_log.append(msg)
            kind = msg["header"]["msg_type"]
            if kind in ("comm_open", "comm_msg", "comm_close"):
                self._on_comm(msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            result.messages.append(msg)
            if on_message is not None:
                on_message(msg)
        reply = await self.client.get_shell_msg(timeout=10)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = await self.client.get_shell_msg(timeout=10)
        result.status = reply["content"]["status"]
        result.execution_count = reply["content"].get("execution_count")
        result.elapsed_s = time.perf_counter() - started
        return result

    def _send_execute(self, code: str, metadata: dict[str, Any] | None) -> str:
        if metadata is None:
            return self.client.execute(code)
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": self.client.allow_stdin,
            "stop_on_error": True,
        }
        msg = self.client.session.msg("execute_request", content, metadata=metadata)
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def _on_comm(self, msg: Message) -> None:
        """Hand comm_open, and later messages on that comm, to the handler of its target."""
        self.comm_log.append(msg)
        content = msg["content"]
        target = content.get("target_name") or self._comm_targets.get(content.get("comm_id", ""))
        if msg["header"]["msg_type"] == "comm_open" and target:
            self._comm_targets[content["comm_id"]] = target
        if target and target in self.comm_handlers:
            self.comm_handlers[target](self, msg)

    async def pump(self, predicate: Callable[[], bool], timeout: float = 10) -> None:
        """Read iopub (answering comms) while no cell is being executed, until `predicate` holds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError("condition not met in time")
            try:
                msg = await self.client.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            self.iopub_log.append(msg)
            if msg["header"]["msg_type"] in ("comm_open", "comm_msg", "comm_close"):
                self._on_comm(msg)

    def close_comm(self, comm_id: str) -> None:
        """A comm_close from the 'frontend' (what JupyterLab sends for an unknown comm target)."""
        msg = self.client.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
        self.client.shell_channel.send(msg)

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> str:
        """A comm_msg from the 'frontend', as JupyterLab sends it; returns its msg id."""
        content = {"comm_id": comm_id, "data": data}
        msg = self.client.session.msg("comm_msg", content)
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def widgets(self, model_name: str, **state: Any) -> list[str]:
        """Comm ids of the open widgets of `model_name` whose state has these values, oldest first."""
        closed = {m["content"]["comm_id"] for m in self.comm_log if m["header"]["msg_type"] == "comm_close"}
        found: list[str] = []
        for msg in self.comm_log:
            content = msg["content"]
            if msg["header"]["msg_type"] != "comm_open" or content.get("target_name") != "jupyter.widget":
                continue
            opened = content["data"]["state"]
            if content["comm_id"] in closed or opened.get("_model_name") != model_name:
                continue
            if all(opened.get(key) == value for key, value in state.items()):
                found.append(content["comm_id"])
        return found

    async def wait_widget(self, model_name: str, timeout: float = 90, **state: Any) -> str:
        """The newest open widget matching, once the kernel has opened it."""
        # 90 s: the first run in a kernel imports litellm, which takes over 30 s on a loaded 2-core machine.
        await wait_for(lambda: bool(self.widgets(model_name, **state)), timeout)
        return self.widgets(model_name, **state)[-1]

    def click(self, comm_id: str) -> str:
        """A Button click exactly as the ipywidgets frontend sends it."""
        return self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})

    def status_seen(self, msg_id: str, state: str = "idle") -> bool:
        return any(
            m["header"]["msg_type"] == "status"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"]["execution_state"] == state
            for m in self.iopub_log
        )

    async def update_widget(self, comm_id: str, state: dict[str, Any], *, ack_timeout: float = 1.0) -> bool:
        """Sync a value change the way the ipywidgets frontend does (needs a running cell reading iopub).

        The frontend keeps at most one update per widget unacknowledged: the next one is held back
        until the kernel publishes an `idle` status whose parent is the previous update. When that
        status does not come within `ack_timeout`, this update is held back forever (returns False),
        which is what a real frontend does in that situation.
        """
        pending = self._unacknowledged.get(comm_id)
        if pending is not None:
            try:
                await wait_for(lambda: self.status_seen(pending), ack_timeout)
            except TimeoutError:
                return False
        data = {"method": "update", "state": state, "buffer_paths": []}
        self._unacknowledged[comm_id] = self.send_comm(comm_id, data)
        return True

    async def interrupt(self) -> None:
        await self.km.interrupt_kernel()


async def wait_for(predicate: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.02)


def replay_kernel_env(home: Path, url: str, *, mode: str = "bypassPermissions") -> dict[str, str]:
    """Environment for a kernel whose goat talks to a replay server, with its own ~/.goat."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "OPENAI_API_BASE": url,
        "OPENAI_API_KEY": "test-key",
        "GOAT_MODEL": "openai/replay",
        "GOAT_HOME": str(home),
        "GOAT_PERMISSION_MODE": mode,
    }


@contextlib.asynccontextmanager
async def goat_kernel(
    workspace: Path, url: str, *, mode: str = "bypassPermissions"
) -> AsyncIterator[KernelSession]:
    """A kernel in `workspace` with goat loaded, talking to the replay server at `url` (~/.goat beside it)."""
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home", url, mode=mode)
    ) as session:
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.messages
        yield session


def prepare_workspace(workspace: Path) -> None:
    """Workspace settings that make retries instant, so error scripts run fast."""
    (workspace / ".goat").mkdir(parents=True, exist_ok=True)
    (workspace / ".goat" / "settings.json").write_text(json.dumps({"retry_base_delay_s": 0.01}))


def trust_workspace(workspace: Path, goat_home: Path) -> None:
    """Trust the workspace's project files in the kernel's GOAT_HOME, as `%goat trust` does (call it
    after writing them: anything added later is not trusted)."""
    from goat_jupyter.config.trust import folder_state, trust_folder

    saved = os.environ.get("GOAT_HOME")
    os.environ["GOAT_HOME"] = str(goat_home)
    try:
        trust_folder(workspace, folder_state(workspace).digest)
    finally:
        if saved is None:
            del os.environ["GOAT_HOME"]
        else:
            os.environ["GOAT_HOME"] = saved
