"""The tool catalog: registration, lookup and LLM schemas (the executor reads it; registry.py adds direct calls)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goat_jupyter.config.managed import load_managed
from goat_jupyter.state import SessionState
from goat_jupyter.tools.base import Tool, render_description

if TYPE_CHECKING:
    from typing_extensions import Self

    from goat_jupyter.mcp_client.client import ServerConnection
    from goat_jupyter.mcp_client.manager import McpManager


class ToolCatalog:
    """Thread-safe, insertion-ordered set of tools with a default session."""

    def __init__(self, session: SessionState | None = None, *, cwd: str | Path | None = None) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, Tool[Any]] = {}
        self._allowed: set[str] = set()
        self.session = session or SessionState(workspace=Path(cwd or Path.cwd()))

    def register(self, tool: Tool[Any]) -> None:
        with self._lock:
            self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        with self._lock:
            self._tools.pop(name, None)
            self._allowed.discard(name)

    def show_mcp_tools(self, manager: McpManager, conn: ServerConnection) -> None:
        """Offer exactly the tools `conn` lists now (the manager calls this on connect and on changes)."""
        from goat_jupyter.tools.mcp import server_tools

        with self._lock:
            self.unregister_mcp_tools(f"mcp__{conn.name}__")
            for tool in server_tools(manager, conn):
                self.register(tool)

    def unregister_mcp_tools(self, prefix: str) -> list[str]:
        with self._lock:
            removed = [n for n in self._tools if n.startswith(prefix)]
            for name in removed:
                self.unregister(name)
        return removed

    def get(self, name: str) -> Tool[Any] | None:
        with self._lock:
            return self._tools.get(name)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._tools)

    def tools(self) -> list[Tool[Any]]:
        with self._lock:
            return list(self._tools.values())

    def with_allowed(self, *names: str) -> Self:
        """Mark tools as auto-allowed (no permission prompt); returns self for chaining."""
        with self._lock:
            self._allowed.update(names)
        return self

    def is_allowed(self, name: str) -> bool:
        with self._lock:
            return name in self._allowed

    def allowed_names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._allowed))

    def subset(self, names: list[str] | None = None, *, exclude: set[str] | None = None) -> Self:
        """A registry sharing these tool objects, restricted to `names` and without `exclude`."""
        child = type(self)(self.session)
        for tool in self.tools():
            if (names is None or tool.name in names) and tool.name not in (exclude or set()):
                child.register(tool)
        child.with_allowed(*self._allowed)
        return child

    def search_hints(self) -> dict[str, str]:
        """The deferred tools' few words on their purpose, which ToolSearch matches too."""
        return {tool.name: tool.search_hint for tool in self.tools() if tool.search_hint}

    def llm_tools(self) -> list[dict[str, Any]]:
        """Every tool in OpenAI function format, descriptions rendered for this session; the managed
        policy's disabled tools are left out."""
        policy = load_managed()
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": render_description(
                        tool.description, workspace=self.session.workspace, cwd=self.session.cwd
                    ),
                    "parameters": tool.parameters_schema(),
                },
            }
            for tool in self.tools()
            if not tool.hidden and not policy.tool_disabled(tool.name)
        ]
