"""ReadMcpResource: read one resource of an MCP server by URI."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.mcp_client.config import normalise_server_name
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.tools.mcp.mcp_results import resource_output


class ReadMcpResourceInput(ToolInput):
    server: str = Field(description="Name of the MCP server.")
    uri: str = Field(description="URI of the resource.")


class ReadMcpResourceTool(Tool[ReadMcpResourceInput]):
    name = "ReadMcpResource"
    deferred = True
    input_model = ReadMcpResourceInput
    side_effect = "read_only"

    def title_for(self, args: ReadMcpResourceInput) -> str:
        return f"Read {args.uri} from {args.server}"

    async def run(self, args: ReadMcpResourceInput, ctx: ToolContext) -> ToolOutput | str:
        manager = required(ctx.services.mcp, "mcp", self.name)
        result = await manager.read_resource(args.server, args.uri)
        return resource_output(result, normalise_server_name(args.server), args.uri)
