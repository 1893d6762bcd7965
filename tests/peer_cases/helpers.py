"""Shared helpers for the peer-derived cases: tool calls in one or several sessions of one kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goat_jupyter.state import FileReadState, SessionState
from goat_jupyter.tools import Registry, ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.runner import Executor


class Sessions:
    """Several sessions over one registry (one kernel): `shared` ones share file-read records like a
    session and its subagents; the others are independent like two notebooks' conversations."""

    def __init__(self, workspace: Path) -> None:
        self.registry: Registry = default_registry(cwd=workspace)
        self.workspace = workspace
        self._counter = 0

    def new(self, reads: FileReadState | None = None) -> SessionState:
        return SessionState(workspace=self.workspace, file_reads=reads or FileReadState())

    async def call(self, session: SessionState, name: str, args: dict[str, Any]) -> ToolOutput:
        self._counter += 1
        executor = Executor(self.registry, session)
        return await executor.run_one(ToolCall(f"peer_{self._counter}", name, args))


async def call(registry: Registry, name: str, **args: Any) -> ToolOutput:
    return await registry.call(name, args)


def error_code(out: ToolOutput) -> str | None:
    return out.metadata.get("error_code") if out.is_error else None
