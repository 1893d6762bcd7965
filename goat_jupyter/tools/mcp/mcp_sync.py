"""A connected MCP server's tools as goat tools: `mcp__{server}__{tool}`, called with progress and
their results turned into ToolOutput. The registry asks for them whenever the manager reports a
server connected or its tool list changed (mcp/manager.py's ToolTable)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from goat_jupyter.tools.mcp.mcp_results import call_result_output
from goat_jupyter.tools.mcp.mcp_tool import McpTool

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT
    from mcp_types import Tool

    from goat_jupyter.mcp_client.client import ServerConnection
    from goat_jupyter.mcp_client.manager import McpManager
    from goat_jupyter.tools.context import ToolContext
    from goat_jupyter.tools.output import ToolOutput

MAX_TOOL_NAME = 64  # the longest function name the OpenAI-style APIs accept


def exposed_tool_name(server: str, tool: str) -> str:
    """The part after `mcp__{server}__`: allowed characters only, the whole name cut to 64."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", tool)
    room = MAX_TOOL_NAME - len(f"mcp__{server}__")
    return safe[: max(room, 1)]


def _progress_reporter(ctx: ToolContext) -> ProgressFnT:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        ctx.progress(output=f"[progress {done}] {message or ''}".rstrip() + "\n")

    return report


class ServerTools:
    """The client behind one server's McpTools: maps each exposed name back to the server's own."""

    def __init__(self, manager: McpManager, server: str) -> None:
        self.manager = manager
        self.server = server
        self.originals: dict[str, str] = {}  # exposed tool name -> the server's name

    async def call_tool(
        self, server: str, tool_name: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolOutput:
        """Run one tool on its server (McpTool calls this); failures raise GoatErrors."""
        original = self.originals.get(tool_name, tool_name)
        result = await self.manager.call_tool(server, original, arguments, _progress_reporter(ctx))
        return call_result_output(result, f"{self.server}: {original}")

    def tool(self, tool: Tool) -> McpTool | None:
        """The goat tool for one of the server's tools; None when its name collapses onto an earlier one."""
        exposed = exposed_tool_name(self.server, tool.name)
        if exposed in self.originals:
            return None  # two of the server's names collapse to one; keep the first
        self.originals[exposed] = tool.name
        annotations = (
            tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
        )
        schema: dict[str, Any] = {"type": "object", "properties": {}, **tool.input_schema}
        description = tool.description or tool.title or ""
        return McpTool(self.server, exposed, description, schema, annotations, self)


def server_tools(manager: McpManager, conn: ServerConnection) -> list[McpTool]:
    """Every tool `conn` lists, as goat tools calling through `manager`."""
    client = ServerTools(manager, conn.name)
    return [tool for tool in map(client.tool, conn.tools) if tool is not None]
