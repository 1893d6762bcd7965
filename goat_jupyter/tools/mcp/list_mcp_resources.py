"""ListMcpResources: resources offered by the connected MCP servers."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.tools.mcp.mcp_results import resource_list_output


class ListMcpResourcesInput(ToolInput):
    server: str | None = Field(default=None, description="Only this server's resources.")


class ListMcpResourcesTool(Tool[ListMcpResourcesInput]):
    name = "ListMcpResources"
    deferred = True
    input_model = ListMcpResourcesInput
    side_effect = "read_only"

    async def run(self, args: ListMcpResourcesInput, ctx: ToolContext) -> ToolOutput | str:
        manager = required(ctx.services.mcp, "mcp", self.name)
        return resource_list_output(await manager.list_resources(args.server))
