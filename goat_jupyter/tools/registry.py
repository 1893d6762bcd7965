"""The registry: the tool catalog plus direct calls through the executor (no permissions or hooks)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from goat_jupyter.tools.catalog import ToolCatalog
from goat_jupyter.tools.runner import Executor, ToolCall

if TYPE_CHECKING:
    from goat_jupyter.state import SessionState
    from goat_jupyter.tools.output import ToolOutput


class Registry(ToolCatalog):
    """The catalog with a default session for `call`."""

    def __init__(self, session: SessionState | None = None, *, cwd: str | Path | None = None) -> None:
        super().__init__(session, cwd=cwd)
        self._call_counter = 0

    async def call(self, name: str, tool_input: dict[str, Any] | str) -> ToolOutput:
        """Validate and run one tool in the default session; no permissions or hooks."""
        with self._lock:
            self._call_counter += 1
            call_id = f"direct_{self._call_counter}"
        executor = Executor(self, self.session)
        return await executor.run_one(ToolCall(call_id, name, tool_input))
