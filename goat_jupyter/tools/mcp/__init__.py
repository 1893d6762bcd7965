"""The MCP tools: each connected server's tools as mcp__{server}__{tool}, and ListMcpResources/ReadMcpResource."""
