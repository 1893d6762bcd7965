"""A tool offered by an MCP server, named mcp__{server}__{tool}."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import ConfigDict

from goat_jupyter.mcp_client.config import normalise_server_name
from goat_jupyter.tools.base import SideEffect, Tool, ToolContext, ToolInput, ToolOutput


class McpInput(ToolInput):
    """MCP tools validate against the server's own schema; locally anything object-shaped passes."""

    model_config = ConfigDict(extra="allow")


def side_effect_from_annotations(annotations: dict[str, Any]) -> SideEffect:
    if annotations.get("readOnlyHint"):
        return "read_only"
    return "mutating"


def risk_from_annotations(annotations: dict[str, Any]) -> str:
    """readOnlyHint -> low, destructiveHint -> critical, neither -> high (TOOLS.md)."""
    if annotations.get("readOnlyHint"):
        return "low"
    if annotations.get("destructiveHint"):
        return "critical"
    return "high"


class McpCaller(Protocol):
    """Runs a server's tool (tools/mcp/mcp_sync.py's ServerTools, or a test's local client)."""

    async def call_tool(
        self, server: str, tool_name: str, arguments: dict[str, Any], ctx: ToolContext, /
    ) -> ToolOutput | str: ...


class McpTool(Tool[McpInput]):
    input_model = McpInput

    def __init__(
        self,
        server: str,
        tool_name: str,
        description: str,
        schema: dict[str, Any],
        annotations: dict[str, Any],
        client: McpCaller,
    ) -> None:
        super().__init__()
        self.server = normalise_server_name(server)
        self.tool_name = tool_name
        self.name = f"mcp__{self.server}__{tool_name}"  # pyright: ignore[reportAttributeAccessIssue]
        self._description = description or f"{tool_name} from the MCP server {server}."
        self.schema = schema or {"type": "object", "properties": {}}
        self.annotations = annotations
        self.client = client
        self.side_effect = side_effect_from_annotations(annotations)  # pyright: ignore[reportAttributeAccessIssue]

    @property
    def risk(self) -> str:
        return risk_from_annotations(self.annotations)

    def parameters_schema(self) -> dict[str, Any]:
        return self.schema

    def budget_group(self) -> str | None:
        return self.server

    def title_for(self, args: McpInput) -> str:
        return f"{self.server}: {self.tool_name}"

    async def run(self, args: McpInput, ctx: ToolContext) -> ToolOutput | str:
        return await self.client.call_tool(self.server, self.tool_name, args.model_dump(), ctx)
