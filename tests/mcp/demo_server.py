"""A small MCP server for the tests: resources, and tools that answer, fail, crash, hang or draw.

Run over stdio by default; `--http PORT` serves streamable HTTP on 127.0.0.1:PORT instead, `--sse PORT`
the older SSE transport.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import time
from collections.abc import Callable

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

# The smallest valid PNG: one transparent pixel.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("demo")


@server.tool(
    description="Return the id of the server's process.", annotations=ToolAnnotations(read_only_hint=True)
)
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Repeat the text.")
def echo(text: str, times: int = 1) -> str:
    return " ".join([text] * times)


@server.tool(description="Sleep, then answer.")
async def hang(seconds: float = 60) -> str:
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool(description="Count to n, reporting progress at each step.")
async def count(n: int, ctx: Context) -> str:
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted to {n}"


@server.tool(
    description="End the server process at once.", annotations=ToolAnnotations(destructive_hint=True)
)
def crash() -> str:
    os._exit(3)


@server.tool(description="Always fails.")
def fail() -> str:
    raise ToolError("the demo tool failed on purpose")


@server.tool(description="Return a one-pixel image and a caption.", structured_output=False)
def pixel() -> list[str | Image]:
    return ["one transparent pixel", Image(data=PIXEL_PNG, format="png")]


@server.tool(name="dotted.name", description="A tool whose name has a dot.")
def dotted() -> str:
    return "dotted ok"


@server.tool(description="Add the tool `grown` and tell the client that the tool list changed.")
async def grow(ctx: Context) -> str:
    def grown() -> str:
        return "grown ok"

    server.add_tool(grown, description="Added at run time by grow.")
    await ctx.notify_tools_changed()  # 2026-07-28 clients: their subscriptions/listen stream
    await ctx.session.send_tool_list_changed()  # older clients: a notification (dropped for newer ones)
    return "grew"


@server.resource("demo://greeting", description="A greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from the demo resource"


@server.resource("demo://pixel.png", description="A one-pixel image", mime_type="image/png")
def pixel_resource() -> bytes:
    return PIXEL_PNG


def stock_of(number: int) -> Callable[[str], str]:
    def stock(sku: str) -> str:
        return f"warehouse {number:03d} holds 7 of {sku}"

    return stock


def add_warehouses(count: int) -> None:
    """`count` more tools, warehouse_000 ... (a server with hundreds of tools, issue 34)."""
    for number in range(count):
        server.add_tool(
            stock_of(number),
            name=f"warehouse_{number:03d}",
            description=f"Stock level of one product in warehouse number {number:03d} of the chain.",
            annotations=ToolAnnotations(read_only_hint=True),
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port")
    parser.add_argument("--sse", type=int, default=0, help="serve the older SSE transport on this port")
    parser.add_argument("--slow-start", type=float, default=0.0, help="seconds to wait before serving")
    parser.add_argument("--fail-at-start", action="store_true", help="write to stderr and exit 2")
    parser.add_argument("--warehouses", type=int, default=0, help="add this many warehouse_NNN tools")
    args = parser.parse_args()
    add_warehouses(args.warehouses)
    if args.fail_at_start:
        print("demo server: refusing to start (on purpose)", file=sys.stderr)
        sys.exit(2)
    time.sleep(args.slow_start)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse:
        server.run("sse", host="127.0.0.1", port=args.sse)
    else:
        server.run()


if __name__ == "__main__":
    main()
