"""WebFetch: fetch a URL, convert HTML to Markdown, optionally answer a prompt about it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class WebFetchInput(ToolInput):
    url: str = Field(description="Fully formed URL (http is upgraded to https).")
    prompt: str | None = Field(
        default=None, description="What to extract from the page (answered by a small model)."
    )
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = Field(default="GET")
    headers: dict[str, str] | None = Field(default=None, description="Extra request headers.")
    body: str | None = Field(default=None, description="Request body for POST/PUT/PATCH.")
    timeout: float | None = Field(default=None, gt=0, le=120, description="Timeout in seconds (default 30).")


class WebFetchTool(Tool[WebFetchInput]):
    name = "WebFetch"
    input_model = WebFetchInput
    side_effect = "network"
    max_output_chars = 102_000  # the page is cut at 100 000 characters; leave room for the header lines

    def title_for(self, args: WebFetchInput) -> str:
        return f"Fetch {args.url}" if args.method == "GET" else f"{args.method} {args.url}"

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolOutput | str:
        fetcher = required(ctx.services.web, "web", self.name)
        return await fetcher.fetch(args, ctx)
