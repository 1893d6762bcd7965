"""One MCP tool call from the command line, for the browser test (labextension/ui-tests/tests/
mcp_server.spec.ts): `python -m tests.mcp_server.client_cli URL TOOL JSON_ARGS [TOKEN]` prints
`{"error": bool, "text": str}`. The SDK's client, named "galata-agent", a new connection each call."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation


async def one_call(url: str, tool: str, args: dict[str, Any], token: str) -> dict[str, Any]:
    headers = {"Authorization": f"token {token}"} if token else {}  # a test server without auth: none
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
    async with http, streamable_http_client(url, http_client=http) as streams:
        info = Implementation(name="galata-agent", version="1")
        async with ClientSession(streams[0], streams[1], client_info=info) as session:
            await session.initialize()
            result = await session.call_tool(tool, args)
    text = "\n".join(str(getattr(part, "text", "")) for part in result.content)
    return {"error": bool(result.is_error), "text": text}


def main(argv: list[str]) -> int:
    url, tool, raw = argv[:3]
    token = argv[3] if len(argv) > 3 else ""
    print(json.dumps(asyncio.run(one_call(url, tool, json.loads(raw), token))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
